"""The checks of test_finetune_serving_and_tfds.py, as functions that need
the TensorFlow backend. The test calls them in its own process when its
backend is TensorFlow, and otherwise runs this file in a TensorFlow
process (Keras picks its backend once per process):

    KERAS_BACKEND=tensorflow python tests/cli/finetune_tensorflow_features.py NAME PRESET DIRECTORY

which prints the named function's result as JSON.
"""

import json
import pathlib
import sys

if __name__ == "__main__":
    # Run as a file: the repository root, for `tests.` imports.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from tests.cli.test_finetune_command import classification_file  # noqa: E402
from tests.cli.test_finetune_command import run  # noqa: E402


def serving(preset, directory):
    """A classification run's labels, and what its serving SavedModel
    answers for one raw string."""
    import tensorflow as tf

    directory = pathlib.Path(directory)
    train = classification_file(directory)
    output, metrics = run(preset, directory, "classification", train, train)
    serve = tf.saved_model.load(str(output / "serving")).signatures["serving_default"]
    outputs = serve(text=tf.constant(["a cat"]))
    return dict(
        labels=metrics["labels"],
        probabilities=outputs["probabilities"].shape.as_list(),
        served_labels=[label.decode() for label in outputs["labels"].numpy()],
    )


def tfds_labels(preset, directory):
    """The labels of a run on a (mock) TFDS dataset named by split names."""
    import tensorflow_datasets as tfds

    with tfds.testing.mock_data(num_examples=16):
        _, metrics = run(preset, pathlib.Path(directory), "classification", "train", "validation",
                         "--tfds=glue/sst2", "--text_columns", "sentence")
    return metrics["labels"]


if __name__ == "__main__":
    print(json.dumps(globals()[sys.argv[1]](*sys.argv[2:])))
