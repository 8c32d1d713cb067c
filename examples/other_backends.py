"""Fine-tune the bundled albert_tiny_en on JAX or PyTorch, no TensorFlow needed.

Keras picks its backend from KERAS_BACKEND before anything imports it;
keras_albert follows (TensorFlow stays the default when it is unset):

    KERAS_BACKEND=jax python examples/other_backends.py
    KERAS_BACKEND=torch python examples/other_backends.py --train_size 500

The same preset directories load on every backend, so a model trained here
can be exported later from a TensorFlow process (export is TensorFlow's).
"""

import argparse
import sys
import time

import keras

import keras_albert
from keras_albert.datasets.wordnet_supersense import supersense_labels
from keras_albert.datasets.wordnet_supersense import supersense_split_sample


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train_size", type=int, default=2000)
    parser.add_argument("--eval_size", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    keras.utils.set_random_seed(args.seed)

    # Random samples: both splits are ordered by supersense.
    texts, labels, eval_texts, eval_labels = supersense_split_sample(
        args.train_size, args.eval_size, seed=0
    )
    classifier = keras_albert.AlbertClassifier.from_preset(
        "albert_tiny_en",
        num_classes=len(supersense_labels("n")),
        label_names=list(supersense_labels("n")),
    )
    classifier.preprocessor.sequence_length = 64
    classifier.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    start = time.perf_counter()
    classifier.fit(texts, labels, batch_size=32, epochs=args.epochs, verbose=2)
    _, accuracy = classifier.evaluate(eval_texts, eval_labels, verbose=0)
    print(
        f"backend={keras.config.backend()} "
        f"tensorflow_imported={sys.modules.get('tensorflow') is not None} "
        f"accuracy={accuracy:.3f} seconds={time.perf_counter() - start:.0f}"
    )
    return accuracy


if __name__ == "__main__":
    main()
