"""Classify texts with an exported .tflite classifier, LiteRT and SentencePiece.

Needs nothing but `pip install ai-edge-litert sentencepiece` (no
TensorFlow, no keras_albert). The vocabulary and the labels come from the
file's TFLite metadata: its associated files are a zip appended to the
flatbuffer, holding `sentencepiece.model` (ALBERT's lowercasing and accent
stripping are in its normaliser, so plain SentencePiece gives the model's
ids) and `labels.txt` (one class name per line, in class-id order). The
file is written by

    python -m keras_albert export --preset=albert_tiny_en_student_supersense \\
        --format=tflite --output=classifier.tflite

Prints one JSON line per text: the best label, its probability and every
class's probability in class-id order.

    python examples/litert_text_classifier.py classifier.tflite texts.txt
"""

import argparse
import json
import sys
import zipfile

import numpy as np
import sentencepiece
from ai_edge_litert.interpreter import Interpreter

TOKENIZER_FILE = "sentencepiece.model"
LABEL_FILE = "labels.txt"


def associated_files(model_path):
    """{name: bytes} of the files stored in the model's metadata."""
    with zipfile.ZipFile(model_path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


class TextClassifier:
    """Tokenizes as the model was trained ([CLS] text [SEP], padded with 0)
    and runs batches of texts through the file's signature."""

    def __init__(self, model_path):
        files = associated_files(model_path)
        self.labels = files[LABEL_FILE].decode("utf-8").split("\n")
        self.tokenizer = sentencepiece.SentencePieceProcessor(model_proto=files[TOKENIZER_FILE])
        self.cls_id = self.tokenizer.piece_to_id("[CLS]")
        self.sep_id = self.tokenizer.piece_to_id("[SEP]")
        interpreter = Interpreter(model_path=model_path)
        self.runner = interpreter.get_signature_runner()
        self.sequence_length = int(self.runner.get_input_details()["token_ids"]["shape"][1])

    def features(self, texts):
        ids = np.zeros([len(texts), self.sequence_length], np.int32)
        mask = np.zeros_like(ids)
        for row, text in enumerate(texts):
            pieces = self.tokenizer.encode(text)[: self.sequence_length - 2]
            packed = [self.cls_id, *pieces, self.sep_id]
            ids[row, : len(packed)] = packed
            mask[row, : len(packed)] = 1
        return {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask}

    def probabilities(self, texts):
        """[len(texts), classes] probabilities; any batch size (the file's
        batch dimension is resized to the batch)."""
        return self.runner(**self.features(texts))["probabilities"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .tflite classifier with TFLite metadata")
    parser.add_argument("texts", nargs="?", help="a UTF-8 file, one text per line (default: stdin)")
    parser.add_argument("--batch_size", type=int, default=32, help="texts per invocation")
    args = parser.parse_args(argv)
    with open(args.texts, encoding="utf-8") if args.texts else sys.stdin as lines:
        texts = [line.rstrip("\n") for line in lines]
    classifier = TextClassifier(args.model)
    for start in range(0, len(texts), args.batch_size):
        for scores in classifier.probabilities(texts[start : start + args.batch_size]):
            best = int(scores.argmax())
            print(json.dumps({
                "label": classifier.labels[best],
                "score": float(scores[best]),
                "scores": [float(score) for score in scores],
            }), flush=True)


if __name__ == "__main__":
    main()
