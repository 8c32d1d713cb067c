"""Span QA, multiple choice and token classification from albert_tiny_en.

Each task model starts from the bundled preset, learns a tiny task made up
here from the bundled WordNet glosses, and answers new inputs. A minute or
two per task on a laptop CPU; `--examples 60 --epochs 1` is a quick check.

    python examples/task_models.py
    python examples/task_models.py --tasks qa tagging --examples 200
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402

TASKS = ("qa", "choice", "tagging")
ANIMALS = ["cat", "dog", "horse", "bird", "fish", "sheep"]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[5:]),
    )
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument("--examples", type=int, default=600,
                        help="glosses to build each task from; 5/6 train, 1/6 test")
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs per task (default: 3 for QA and tagging, 2 for choice)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.examples < 12:
        parser.error(f"--examples must be >= 12 (a test part of at least 2); received {args.examples}")
    if args.epochs is not None and args.epochs < 1:
        parser.error(f"--epochs must be >= 1; received {args.epochs}")
    return args


def question_answering(preset, glosses, epochs, rng):
    """Where is the animal hidden in the gloss?"""
    import keras

    import keras_albert

    contexts, answers = [], []
    for gloss in glosses:
        words = gloss.split()
        position = int(rng.integers(len(words) + 1))
        animal = str(rng.choice(ANIMALS))
        words.insert(position, animal)
        contexts.append(" ".join(words))
        answers.append((animal, len(" ".join(words[:position])) + (1 if position else 0)))
    qa = keras_albert.AlbertQuestionAnswerer.from_preset(
        preset,
        preprocessor=keras_albert.AlbertQuestionAnswererPreprocessor.from_preset(
            preset, sequence_length=48, doc_stride=16
        ),
    )
    qa.compile(optimizer=keras.optimizers.Adam(1e-4))
    split = len(contexts) * 5 // 6
    # Long contexts are cut into overlapping windows, each labelled.
    qa.fit((["which animal?"] * split, contexts[:split]), answers[:split], batch_size=32, epochs=epochs or 3,
           verbose=2)
    predicted = qa.answer(["which animal?"] * (len(contexts) - split), contexts[split:])
    exact = np.mean([p["text"] == a[0] for p, a in zip(predicted, answers[split:])])
    print(f"QA: exact match {exact:.2f}; e.g. {contexts[split]!r} -> {predicted[0]['text']!r}")


def multiple_choice(preset, glosses, epochs, rng):
    """Which definition was the context taken from?"""
    import keras

    import keras_albert

    x = {"context": [], "question": [], "choices": []}
    labels = []
    for _ in range(len(glosses) * 2 // 3):
        choices = [glosses[j] for j in rng.choice(len(glosses), 4, replace=False)]
        answer = int(rng.integers(4))
        x["context"].append(" ".join(choices[answer].split()[:4]))
        x["question"].append("which definition starts like this?")
        x["choices"].append(choices)
        labels.append(answer)
    model = keras_albert.AlbertMultipleChoice.from_preset(
        preset,
        preprocessor=keras_albert.AlbertMultipleChoicePreprocessor.from_preset(preset, sequence_length=48),
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-4))
    split = len(labels) * 4 // 5
    train = {k: v[:split] for k, v in x.items()}
    test = {k: v[split:] for k, v in x.items()}
    model.fit(train, np.array(labels[:split]), batch_size=16, epochs=epochs or 2, verbose=2)
    accuracy = (model.predict(test, verbose=0).argmax(-1) == np.array(labels[split:])).mean()
    print(f"multiple choice (4 options): accuracy {accuracy:.2f} (chance 0.25)")


def token_classification(preset, glosses, epochs, rng):
    """Tag the animal words inserted into glosses."""
    import keras

    import keras_albert

    sentences, tags = [], []
    for gloss in glosses:
        words = gloss.split()
        words.insert(int(rng.integers(len(words) + 1)), str(rng.choice(ANIMALS)))
        sentences.append(words)
        tags.append([1 if w in ANIMALS else 0 for w in words])
    tagger = keras_albert.AlbertTokenClassifier.from_preset(
        preset, num_classes=2,
        preprocessor=keras_albert.AlbertTokenClassifierPreprocessor.from_preset(preset, sequence_length=48),
    )
    tagger.compile(optimizer=keras.optimizers.Adam(1e-4))
    split = len(sentences) * 5 // 6
    # Word lists of any lengths, one label per word.
    tagger.fit(sentences[:split], tags[:split], batch_size=32, epochs=epochs or 3, verbose=2)
    predicted = tagger.predict_word_labels(sentences[split:])
    accuracy = np.mean(np.concatenate(predicted) == np.concatenate(tags[split:]))
    print(f"token classification: word accuracy {accuracy:.3f}; {sentences[split]} -> {predicted[0]}")


def main(argv=None):
    args = parse_args(argv)
    # Imported after the flags so `--help` answers without loading TensorFlow.
    from keras_albert import datasets

    glosses, _ = datasets.load_supersense("train", pos="n")
    glosses = [g for g in glosses if 4 <= len(g.split()) <= 12][: args.examples]
    runs = {"qa": question_answering, "choice": multiple_choice, "tagging": token_classification}
    rng = np.random.default_rng(args.seed)
    for task in args.tasks:
        runs[task](args.preset, glosses, args.epochs, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
