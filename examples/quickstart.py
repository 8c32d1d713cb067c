"""The main job on the bundled data, end to end, in a few minutes on a CPU.

1. Train a SentencePiece vocabulary on the bundled Jane Austen novels (all
   but Persuasion) and WordNet glosses.
2. Pretrain a small ALBERT with masked-LM on the same text.
3. Fine-tune an `AlbertClassifier` on WordNet supersenses (gloss -> one of
   the 26 noun supersenses; deterministic split by synset id).
4. Save it as a preset, reload it with `from_preset`, check the reloaded
   model predicts the same, and classify a few raw strings.

Usage:
    python examples/quickstart.py --output saved_models/quickstart
"""

import argparse
import itertools
import json
import os
import pathlib
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.data.sentencepiece_training import train_sentencepiece  # noqa: E402
from keras_albert.training import WarmupLinearDecay  # noqa: E402


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def pretraining_texts(max_texts):
    """Austen paragraphs (Persuasion held out) and WordNet training glosses."""
    paragraphs = [
        paragraph
        for document in datasets.load_austen_documents(exclude=("persuasion",))
        for paragraph in document
    ]
    glosses, _ = datasets.load_supersense("train")
    texts = paragraphs + list(glosses)
    rng = np.random.default_rng(0)
    rng.shuffle(texts)
    return texts[:max_texts]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="saved_models/quickstart")
    parser.add_argument("--vocabulary_size", type=int, default=5000)
    parser.add_argument("--pretrain_steps", type=int, default=300)
    parser.add_argument("--finetune_examples", type=int, default=8000)
    parser.add_argument("--finetune_epochs", type=int, default=3)
    parser.add_argument("--sequence_length", type=int, default=64)
    parser.add_argument("--finetune_sequence_length", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(args.seed)
    started = time.time()

    log("1/4 training a SentencePiece vocabulary on the bundled text")
    texts = pretraining_texts(max_texts=60000)
    proto = train_sentencepiece(texts, vocabulary_size=args.vocabulary_size)
    tokenizer = keras_albert.AlbertTokenizer(proto=proto)
    log(f"    {tokenizer.vocabulary_size()} pieces from {len(texts)} texts")

    log("2/4 pretraining a small ALBERT (masked LM)")
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(),
        num_layers=4,
        num_heads=4,
        embedding_dim=64,
        hidden_dim=128,
        intermediate_dim=512,
        max_sequence_length=args.sequence_length,
    )
    masked_lm = keras_albert.AlbertMaskedLM(
        backbone,
        preprocessor=keras_albert.AlbertMaskedLMPreprocessor(
            tokenizer,
            sequence_length=args.sequence_length,
            mask_selection_length=10,
        ),
    )
    # Post-LN encoders need warmup; without it masked-LM sits at the unigram
    # plateau (predicting frequent tokens) for far longer.
    schedule = WarmupLinearDecay(
        peak_learning_rate=1e-3,
        warmup_steps=max(1, args.pretrain_steps // 10),
        total_steps=args.pretrain_steps,
    )
    masked_lm.compile(optimizer=keras.optimizers.AdamW(schedule, weight_decay=0.01))
    corpus = (
        tf.data.Dataset.from_tensor_slices(texts)
        .shuffle(10000, seed=args.seed)
        .repeat()
        .batch(64, drop_remainder=True)
    )
    steps_per_epoch = min(50, args.pretrain_steps)
    history = masked_lm.fit(
        corpus,
        steps_per_epoch=steps_per_epoch,
        epochs=max(1, args.pretrain_steps // steps_per_epoch),
        verbose=2,
    )
    mlm_accuracy = history.history["sparse_categorical_accuracy"][-1]
    log(f"    masked-LM training accuracy {mlm_accuracy:.3f}")

    log("3/4 fine-tuning a classifier on WordNet noun supersenses")
    labels = datasets.supersense_labels(pos="n")
    train_texts, train_labels = datasets.load_supersense("train", pos="n")
    test_texts, test_labels = datasets.load_supersense("validation", pos="n")
    order = np.random.default_rng(args.seed).permutation(len(train_texts))
    order = order[: args.finetune_examples]
    train_texts = [train_texts[i] for i in order]
    train_labels = np.asarray(train_labels)[order]
    classifier = keras_albert.AlbertClassifier(
        backbone,
        num_classes=len(labels),
        # Glosses are short (about 16 pieces): pad them to 32, not 64.
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(
            tokenizer, sequence_length=args.finetune_sequence_length
        ),
    )
    finetune_steps = args.finetune_epochs * (len(train_texts) // 64 + 1)
    classifier.compile(
        optimizer=keras.optimizers.Adam(
            WarmupLinearDecay(3e-4, finetune_steps // 10, finetune_steps)
        )
    )
    classifier.fit(
        x=train_texts,
        y=train_labels,
        batch_size=64,
        epochs=args.finetune_epochs,
        verbose=2,
    )
    test_logits = classifier.predict(test_texts, batch_size=256, verbose=0)
    accuracy = float((test_logits.argmax(-1) == np.asarray(test_labels)).mean())
    majority = float(np.bincount(train_labels).max() / len(train_labels))
    log(
        f"    held-out accuracy {accuracy:.3f} on {len(test_texts)} glosses "
        f"(majority class {majority:.3f})"
    )

    log("4/4 saving a preset, reloading it, predicting raw strings")
    preset_dir = output / "supersense_classifier"
    classifier.save_to_preset(str(preset_dir))
    (preset_dir / "labels.json").write_text(json.dumps(list(labels)))
    reloaded = keras_albert.AlbertClassifier.from_preset(str(preset_dir))
    examples = [
        "a large carnivorous feline of Africa and Asia",
        "a building where people go to pray",
        "the feeling of great happiness",
        "a flat round cake eaten at breakfast",
    ]
    original = classifier.predict(examples, verbose=0)
    restored = reloaded.predict(examples, verbose=0)
    difference = float(np.abs(original - restored).max())
    for text, row in zip(examples, restored):
        log(f"    {labels[int(row.argmax())]:<20} <- {text!r}")

    report = {
        "vocabulary_size": tokenizer.vocabulary_size(),
        "backbone_parameters": backbone.count_params(),
        "masked_lm_train_accuracy": round(mlm_accuracy, 4),
        "supersense_heldout_accuracy": round(accuracy, 4),
        "supersense_majority_baseline": round(majority, 4),
        "reload_max_abs_difference": difference,
        "preset": str(preset_dir),
        "seconds": round(time.time() - started, 1),
    }
    (output / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    if difference > 1e-5:
        raise SystemExit(f"reloaded preset differs from the trained model: {difference}")


if __name__ == "__main__":
    main()
