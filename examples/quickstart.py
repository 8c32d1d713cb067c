"""The main job: fine-tune the bundled albert_tiny_en on WordNet supersenses.

1. Load the bundled, pretrained `albert_tiny_en` preset (offline).
2. Fine-tune an `AlbertClassifier` on 4,000 noun glosses (gloss -> one of
   26 supersenses; a deterministic split by synset id, never seen in
   pretraining) and score it on the test split, which nothing was chosen
   on; beside it TF-IDF + a linear SVM tuned on the same carve-out of the
   training glosses (the bar a pretrained model has to clear) and the
   majority class.
3. `--full`: 12,000 glosses, and the same architecture from random
   weights with the same data and recipe, to show what pretraining buys.
4. Export the fine-tuned classifier as a serving SavedModel that takes raw
   strings, load it back and classify a few new texts with it.

This is one seeded run, a demonstration; the figures the README claims
(three tasks, three seeds, mean +- sd) come from benchmarks/transfer.py.

Usage:
    python examples/quickstart.py --output runs/quickstart
    python examples/quickstart.py --output runs/quickstart_full --full
"""

import argparse
import importlib.metadata
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# First: importing keras_albert starts TensorFlow without its start-up
# notices on stderr (keras_albert/utils/native_notices.py).
import keras_albert  # noqa: E402

# isort: split
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_albert import datasets  # noqa: E402
from keras_albert.export import export_serving_saved_model  # noqa: E402
from keras_albert.pipelines import ClassifierRecipe  # noqa: E402
from keras_albert.pipelines import fine_tune_classifier  # noqa: E402
from keras_albert.pipelines import majority_baseline  # noqa: E402
from keras_albert.pipelines import tuned_tfidf_baseline  # noqa: E402

PRESET = "albert_tiny_en"
DEMO_TRAIN_EXAMPLES = 4000
FULL_TRAIN_EXAMPLES = 12000
# New texts (not WordNet glosses) and the supersense a reader would give
# each: the report says which ones the model gets right.
NEW_TEXTS = {
    "a large domesticated animal kept for riding or pulling loads": "noun.animal",
    "the act of running quickly to escape from danger": "noun.act",
    "a feeling of deep sadness after a loss": "noun.feeling",
    "a building where plays and films are shown to an audience": "noun.artifact",
}


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def supersense_data(max_train, seed, max_test=0):
    return datasets.supersense_split_sample(max_train, max_test, seed=seed, held_out="test")


def train_and_evaluate(classifier, data, args):
    """The recommended recipe (`keras_albert.pipelines.ClassifierRecipe`)."""
    train_texts, train_labels, test_texts, test_labels = data
    recipe = ClassifierRecipe(
        epochs=args.epochs, learning_rate=args.learning_rate, batch_size=args.batch_size
    )
    fine_tune_classifier(classifier, train_texts, train_labels, recipe, seed=args.seed)
    logits = classifier.predict(test_texts, batch_size=256, verbose=0)
    return float((logits.argmax(-1) == test_labels).mean())


def tfidf_accuracy(data, seed):
    """TF-IDF + LinearSVC, C and n-grams tuned on a carve-out of the training
    glosses, or None without scikit-learn."""
    try:
        return tuned_tfidf_baseline(*data, seed=seed)["accuracy"]
    except ImportError as error:
        log(f"    (no TF-IDF row: {error})")
        return None


def classifier_from(backbone, preprocessor, num_classes, label_names=None):
    # The class names travel with the model: presets and the serving
    # SavedModel (its `labels` output) keep them.
    return keras_albert.AlbertClassifier(
        backbone, num_classes=num_classes, preprocessor=preprocessor, label_names=label_names
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/quickstart")
    parser.add_argument("--preset", default=PRESET)
    recipe = ClassifierRecipe()
    parser.add_argument("--full", action="store_true",
                        help=f"{FULL_TRAIN_EXAMPLES:,} glosses and the from-scratch comparison "
                             "(about three times as long)")
    parser.add_argument("--train_examples", type=int, default=None,
                        help=f"training glosses (default {DEMO_TRAIN_EXAMPLES:,}; "
                             f"{FULL_TRAIN_EXAMPLES:,} with --full)")
    parser.add_argument("--test_examples", type=int, default=0,
                        help="test-split glosses to score (0: all)")
    parser.add_argument("--epochs", type=int, default=recipe.epochs,
                        help="at most; early stopping on a validation split keeps the best")
    parser.add_argument("--batch_size", type=int, default=recipe.batch_size)
    parser.add_argument("--learning_rate", type=float, default=recipe.learning_rate,
                        help="peak; default: the recipe's for the backbone's width")
    # Glosses are short (about 16 pieces): pad to 32, not the preset's 128.
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.train_examples is None:
        args.train_examples = FULL_TRAIN_EXAMPLES if args.full else DEMO_TRAIN_EXAMPLES
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    started = time.time()

    labels = datasets.supersense_labels(pos="n")
    data = supersense_data(args.train_examples, args.seed, args.test_examples)
    # The training majority, scored on the test labels.
    majority = majority_baseline(data[1], data[3])["accuracy"]
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        args.preset, sequence_length=args.sequence_length
    )

    log(f"1/4 loading the pretrained preset {args.preset!r}")
    keras.utils.set_random_seed(args.seed)
    pretrained = classifier_from(
        keras_albert.AlbertBackbone.from_preset(args.preset), preprocessor, len(labels), labels
    )
    log(f"    {pretrained.backbone.count_params():,} backbone parameters")

    log(f"2/4 fine-tuning on {len(data[0])} glosses ({len(labels)} noun supersenses)")
    pretrained_accuracy = train_and_evaluate(pretrained, data, args)
    log(f"    test accuracy {pretrained_accuracy:.3f} on {len(data[2])} test-split glosses")

    scratch_accuracy = None
    if args.full:
        log("3/4 the same architecture from random weights, same data and schedule")
        keras.utils.set_random_seed(args.seed)
        config = keras_albert.AlbertBackbone.from_preset(args.preset).get_config()
        scratch = classifier_from(
            keras_albert.AlbertBackbone.from_config(config), preprocessor, len(labels), labels
        )
        scratch_accuracy = train_and_evaluate(scratch, data, args)
        log(f"    test accuracy {scratch_accuracy:.3f}")
    else:
        log("3/4 the baselines (--full adds the same model trained from random weights)")
    tfidf = tfidf_accuracy(data, args.seed)
    if tfidf is not None:
        log(f"    TF-IDF + linear SVM on the same glosses: {tfidf:.3f}")

    log("4/4 exporting a serving SavedModel that takes raw strings")
    serving_path = output / "serving"
    difference = export_serving_saved_model(
        pretrained, serving_path, check_texts=data[2][:32]
    )
    pretrained.save_to_preset(str(output / "preset"))
    serve = tf.saved_model.load(str(serving_path)).signatures["serving_default"]
    served = serve(text=tf.constant(list(NEW_TEXTS)))
    predictions = [
        {"text": text, "supersense": name.decode(), "probability": float(p.max()),
         "expected": NEW_TEXTS[text], "correct": name.decode() == NEW_TEXTS[text]}
        for text, name, p in zip(NEW_TEXTS, served["labels"].numpy(), served["probabilities"].numpy())
    ]

    report = {
        "task": "WordNet noun supersense (26 classes), test split",
        "seed": args.seed,
        "preset": args.preset,
        "train_examples": len(data[0]),
        "test_examples": len(data[2]),
        "accuracy_pretrained": round(pretrained_accuracy, 4),
        "accuracy_from_scratch": None if scratch_accuracy is None else round(scratch_accuracy, 4),
        "accuracy_tfidf_linear_svm": None if tfidf is None else round(tfidf, 4),
        "accuracy_majority_class": round(majority, 4),
        "serving_vs_keras_max_abs_logit_difference": difference,
        "predictions_from_saved_model": predictions,
        "paths": {"preset": str(output / "preset"), "serving_saved_model": str(serving_path)},
        "seconds": round(time.time() - started, 1),
        # What the time depends on: a loaded machine runs it slower.
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpu_cores": os.cpu_count(),
                    "load_average_1_5_15_min": [round(v, 2) for v in os.getloadavg()]},
        "threads": {"tensorflow_intra_op": tf.config.threading.get_intra_op_parallelism_threads()
                    or os.cpu_count()},
        "versions": {name: importlib.metadata.version(name)
                     for name in ("keras", "tensorflow", "keras-hub", "scikit-learn")},
        "command": "python examples/quickstart.py " + " ".join(sys.argv[1:]),
    }
    (output / "report.json").write_text(json.dumps(report, indent=2))
    print(f"\n=== keras_albert quickstart report: {len(data[0]):,} training glosses, "
          f"{len(data[2]):,} test-split glosses, seed {args.seed} ===")
    print(f"accuracy, pretrained {args.preset}: {pretrained_accuracy:.3f}")
    if scratch_accuracy is not None:
        print(f"accuracy, same model from scratch: {scratch_accuracy:.3f}")
    if tfidf is not None:
        print(f"accuracy, TF-IDF + linear SVM:     {tfidf:.3f}  (tuned the same way: the bar to clear)")
    print(f"accuracy, majority class:          {majority:.3f}")
    right = sum(row["correct"] for row in predictions)
    print(f"new texts through the SavedModel ({right} of {len(predictions)} right):")
    for row in predictions:
        mark = "right" if row["correct"] else f"WRONG, expected {row['expected']}"
        print(f"  {row['supersense']:<22} {row['probability']:.2f}  {row['text']}  ({mark})")
    print(f"preset:              {output / 'preset'}")
    print(f"serving SavedModel:  {serving_path} (max |logit diff| vs Keras {difference:.1e})")
    print(f"report:              {output / 'report.json'}")
    print(f"total time:          {report['seconds']:.0f} s")


if __name__ == "__main__":
    main()
