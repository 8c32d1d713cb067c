"""Classify texts with an exported .tflite classifier and MediaPipe only.

Needs nothing but `pip install mediapipe` (no TensorFlow, no keras_albert):
MediaPipe Tasks' `TextClassifier` reads the tokenizer (SentencePiece) and
the labels from the file's TFLite metadata, written by

    python -m keras_albert export --preset=albert_tiny_en_student_supersense \\
        --format=tflite --output=classifier.tflite

Prints one JSON line per text: the best label, its probability and every
class's probability in class-id order.

    python examples/mediapipe_text_classifier.py classifier.tflite texts.txt
    echo "a building where plays are shown" | \\
        python examples/mediapipe_text_classifier.py classifier.tflite
"""

import argparse
import json
import sys

from mediapipe.tasks.python.core.base_options import BaseOptions
from mediapipe.tasks.python.text import text_classifier


def classify(model_path, texts):
    """Yields (label, probability, [probability of each class id])."""
    options = text_classifier.TextClassifierOptions(
        base_options=BaseOptions(model_asset_path=model_path), max_results=-1
    )
    with text_classifier.TextClassifier.create_from_options(options) as classifier:
        for text in texts:
            categories = classifier.classify(text).classifications[0].categories
            scores = [0.0] * len(categories)
            for category in categories:
                scores[category.index] = category.score
            best = max(categories, key=lambda category: category.score)
            yield best.category_name, best.score, scores


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .tflite classifier with TFLite metadata")
    parser.add_argument("texts", nargs="?", help="a UTF-8 file, one text per line (default: stdin)")
    args = parser.parse_args(argv)
    with open(args.texts, encoding="utf-8") if args.texts else sys.stdin as lines:
        texts = [line.rstrip("\n") for line in lines]
    # MediaPipe classifies one text per call.
    for label, score, scores in classify(args.model, texts):
        print(json.dumps({"label": label, "score": score, "scores": scores}), flush=True)


if __name__ == "__main__":
    main()
