"""What a user does on JAX or PyTorch with TensorFlow not installed:
the bundled preset's tokenizer and backbone, a classifier's predict and
fit, and a TensorFlow-only feature asked for. Writes what it saw.

    KERAS_BACKEND=jax python tests/backends/no_tensorflow_worker.py OUT.npz
"""

import json
import pathlib
import sys

if __name__ == "__main__":
    sys.modules["tensorflow"] = None
    sys.modules["tensorflow_text"] = None

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402

TEXTS = [
    "Hello  Wörld, the horse runs.",
    "``Quoted'' text\twith\u00a0odd   spaces",
    "Crème brûlée AND naïve café",
    "a",
]
LABELS = np.array([0, 1, 2, 0])


def main(out_path):
    results = {}
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    ids = [list(map(int, row)) for row in tokenizer(TEXTS)]
    backbone = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        "albert_tiny_en", sequence_length=16
    )
    features = preprocessor(TEXTS)
    outputs = backbone(features)
    for name in ("token_ids", "padding_mask"):
        results[name] = keras.ops.convert_to_numpy(features[name]).astype("int32")
    results["sequence_output"] = keras.ops.convert_to_numpy(outputs["sequence_output"])
    keras.utils.set_random_seed(0)
    classifier = keras_albert.AlbertClassifier.from_preset("albert_tiny_en", num_classes=3)
    classifier.preprocessor.sequence_length = 16
    before = classifier.evaluate(TEXTS * 2, np.tile(LABELS, 2), verbose=0)[0]
    classifier.compile(optimizer=keras.optimizers.Adam(1e-3))
    classifier.fit(TEXTS * 2, np.tile(LABELS, 2), batch_size=4, epochs=3, verbose=0)
    after = classifier.evaluate(TEXTS * 2, np.tile(LABELS, 2), verbose=0)[0]
    results["logits"] = classifier.predict(TEXTS, verbose=0)
    # What this backend trained, saved for a TensorFlow process to load.
    classifier.save_to_preset(str(pathlib.Path(out_path).with_name("trained_preset")))
    try:
        from keras_albert.export.serving_saved_model import export_serving_saved_model

        export_serving_saved_model(classifier, str(pathlib.Path(out_path).with_name("served")))
        refusal = None
    except ImportError as error:
        refusal = str(error)
    results["report"] = np.array(json.dumps(dict(
        ids=ids,
        detokenized=tokenizer.detokenize(tokenizer(TEXTS)),
        loss_before=float(before),
        loss_after=float(after),
        refusal=refusal,
        tensorflow_imported=sys.modules.get("tensorflow") is not None,
    )))
    np.savez(out_path, **results)


if __name__ == "__main__":
    main(sys.argv[1])
