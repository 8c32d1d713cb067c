"""Do clients without TensorFlow get the Keras model's labels from our .tflite?

Exports a fine-tuned classifier as token-input TFLite with TFLite metadata
(float32 and dynamic-range int8 by default), then classifies held-out texts
(`--texts` supersense validation glosses, nouns, in a fixed random order
that spans the classes: never trained on) in two client venvs built by `client_environments.py`, each run
isolated from this one (no TensorFlow, no keras_albert importable):

- `mediapipe`: MediaPipe Tasks `TextClassifier` on raw strings, tokenizer
  and labels read from the metadata (examples/mediapipe_text_classifier.py);
- `litert`: ai-edge-litert + sentencepiece, tokenizing with the
  SentencePiece model and naming classes from the label file stored in the
  metadata (examples/litert_text_classifier.py).

The peer is the Keras model (its own preprocessor) in this process: for
each client and file the record holds how many labels equal Keras's, the
agreement and the largest probability difference. Writes
`benchmarks/results/tflite_clients.json` (or `--output`).

    python benchmarks/tflite_clients.py
    python benchmarks/tflite_clients.py --texts 50 --quantize none --output /tmp/clients.json
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

from keras_albert.datasets import supersense_held_out_sample
from keras_albert.export.tflite_export import QUANTIZATIONS
from keras_albert.export.tflite_export import export_tflite
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.publishing.task_loading import load_task

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client_environments  # noqa: E402
from recording import write_result  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIENT_SCRIPTS = {
    "mediapipe": ROOT / "examples" / "mediapipe_text_classifier.py",
    "litert": ROOT / "examples" / "litert_text_classifier.py",
}
_IMPORT_PROBE = (
    "import importlib.util, json; print(json.dumps({m: importlib.util.find_spec(m) is not None "
    "for m in ('tensorflow', 'keras', 'keras_albert', 'tensorflow_text', 'mediapipe', "
    "'ai_edge_litert', 'sentencepiece')}))"
)


def held_out_texts(count):
    """`count` supersense validation glosses (nouns) in a fixed random order.

    The split is sorted by supersense, so its first glosses would be two
    classes; the sample spans them, as the int8 agreement check does.
    """
    try:  # the sample checks the range; the message gains the flag's name
        texts, _ = supersense_held_out_sample(count, pos="n")
    except ValueError as error:
        raise ValueError(f"`--texts`: {error}") from None
    # The clients read one text per line.
    assert not any(set(text) & set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") for text in texts)
    return texts


def keras_probabilities(task, texts):
    logits = np.asarray(task.predict(texts, batch_size=64, verbose=0), "float32")
    logits = logits - logits.max(-1, keepdims=True)
    return np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)


def client_importables(client, cache):
    """Which packages a script run in `client`'s venv can import."""
    python = client_environments.client_python(client, cache)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as probe:
        probe.write(_IMPORT_PROBE)
    try:
        result = client_environments.run_client(client, probe.name, [], cache)
    finally:
        os.unlink(probe.name)
    if result.returncode != 0:
        raise RuntimeError(f"The {client} venv ({python}) cannot run Python: {result.stderr}")
    return json.loads(result.stdout)


def run_client(client, model_path, texts_path, cache):
    """[(label, [probabilities])] from `client`'s script, one per text."""
    result = client_environments.run_client(client, CLIENT_SCRIPTS[client], [model_path, texts_path], cache)
    if result.returncode != 0:
        raise RuntimeError(f"The {client} client failed on {model_path}:\n{result.stderr[-4000:]}")
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return [row["label"] for row in rows], np.asarray([row["scores"] for row in rows], "float32")


def compare(labels, probabilities, expected_labels, expected_probabilities):
    if len(labels) != len(expected_labels):
        raise RuntimeError(f"The client classified {len(labels)} texts of {len(expected_labels)}.")
    equal = int(sum(a == b for a, b in zip(labels, expected_labels)))
    return {
        "equal_labels": equal,
        "texts": len(expected_labels),
        "agreement": equal / len(expected_labels),
        "max_abs_probability_difference": float(np.abs(probabilities - expected_probabilities).max()),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="albert_tiny_en_student_supersense",
                        help="a fine-tuned classifier preset with label names")
    parser.add_argument("--texts", type=int, default=200, help="held-out glosses to classify")
    parser.add_argument("--quantize", nargs="+", default=["none", "dynamic"], choices=QUANTIZATIONS)
    parser.add_argument("--clients", nargs="+", default=sorted(CLIENT_SCRIPTS), choices=sorted(CLIENT_SCRIPTS))
    parser.add_argument("--cache", default=None, help="client venvs (see client_environments.py)")
    parser.add_argument("--output", default="tflite_clients.json", help="result file name or path")
    args = parser.parse_args(argv)

    texts = held_out_texts(args.texts)
    task = load_task(resolve_preset(args.preset))
    expected = keras_probabilities(task, texts)
    expected_labels = [task.label_names[i] for i in expected.argmax(-1)]
    record = {
        "preset": args.preset,
        "texts": f"{len(texts)} supersense validation glosses (nouns, fixed random sample)",
        "sequence_length": task.preprocessor.sequence_length,
        "client_requirements": {c: list(client_environments.CLIENTS[c]) for c in args.clients},
        "client_can_import": {c: client_importables(c, args.cache) for c in args.clients},
        "files": {},
        "clients": {c: {} for c in args.clients},
    }
    with tempfile.TemporaryDirectory() as directory:
        texts_path = pathlib.Path(directory) / "texts.txt"
        texts_path.write_text("\n".join(texts) + "\n", encoding="utf-8")
        for quantize in args.quantize:
            path = pathlib.Path(directory) / f"{quantize}.tflite"
            report = export_tflite(task, path, quantize, check_texts=texts,
                                   representative_texts=texts, metadata=True)
            record["files"][quantize] = {k: report[k] for k in ("bytes", "max_abs_difference")}
            for client in args.clients:
                labels, probabilities = run_client(client, path, texts_path, args.cache)
                result = compare(labels, probabilities, expected_labels, expected)
                record["clients"][client][quantize] = result
                print(f"{client:9s} {quantize:8s} {result['equal_labels']}/{result['texts']} labels equal "
                      f"Keras's; max |probability difference| {result['max_abs_probability_difference']:.2e}",
                      flush=True)
    write_result(args.output, record)
    return record


if __name__ == "__main__":
    main()
