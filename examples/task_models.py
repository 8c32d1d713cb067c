"""Span QA, multiple choice and token classification from albert_tiny_en.

Each task model starts from the bundled preset, learns a tiny task made up
here from the bundled WordNet glosses, and answers new inputs. A minute or
two per task on a laptop CPU.

    python examples/task_models.py
"""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.models.albert_token_classifier_preprocessor import word_label_dataset  # noqa: E402

PRESET = "albert_tiny_en"
rng = np.random.default_rng(0)
glosses, _ = datasets.load_supersense("train", pos="n")
glosses = [g for g in glosses if 4 <= len(g.split()) <= 12][:600]
ANIMALS = ["cat", "dog", "horse", "bird", "fish", "sheep"]


def question_answering():
    """Where is the animal hidden in the gloss?"""
    contexts, answers = [], []
    for gloss in glosses:
        words = gloss.split()
        position = int(rng.integers(len(words) + 1))
        animal = str(rng.choice(ANIMALS))
        words.insert(position, animal)
        contexts.append(" ".join(words))
        answers.append((animal, len(" ".join(words[:position])) + (1 if position else 0)))
    qa = keras_albert.AlbertQuestionAnswerer.from_preset(
        PRESET,
        preprocessor=keras_albert.AlbertQuestionAnswererPreprocessor.from_preset(
            PRESET, sequence_length=48, doc_stride=16
        ),
    )
    qa.compile(optimizer=keras.optimizers.Adam(1e-4))
    windows = qa.preprocessor.windows(["which animal?"] * 500, contexts[:500], answers[:500])
    qa.fit(windows.features, {"start_logits": windows.start_positions,
                              "end_logits": windows.end_positions}, batch_size=32, epochs=3, verbose=2)
    predicted = qa.answer(["which animal?"] * 100, contexts[500:])
    exact = np.mean([p["text"] == a[0] for p, a in zip(predicted, answers[500:])])
    print(f"QA: exact match {exact:.2f}; e.g. {contexts[500]!r} -> {predicted[0]['text']!r}")


def multiple_choice():
    """Which definition was the context taken from?"""
    x = {"context": [], "question": [], "choices": []}
    labels = []
    for i in range(400):
        choices = [glosses[j] for j in rng.choice(len(glosses), 4, replace=False)]
        answer = int(rng.integers(4))
        x["context"].append(" ".join(choices[answer].split()[:4]))
        x["question"].append("which definition starts like this?")
        x["choices"].append(choices)
        labels.append(answer)
    model = keras_albert.AlbertMultipleChoice.from_preset(
        PRESET,
        preprocessor=keras_albert.AlbertMultipleChoicePreprocessor.from_preset(PRESET, sequence_length=48),
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-4))
    train = {k: v[:320] for k, v in x.items()}
    test = {k: v[320:] for k, v in x.items()}
    model.fit(train, np.array(labels[:320]), batch_size=16, epochs=2, verbose=2)
    accuracy = (model.predict(test, verbose=0).argmax(-1) == np.array(labels[320:])).mean()
    print(f"multiple choice (4 options): accuracy {accuracy:.2f} (chance 0.25)")


def token_classification():
    """Tag the animal words inserted into glosses."""
    sentences, tags = [], []
    for gloss in glosses:
        words = gloss.split()
        words.insert(int(rng.integers(len(words) + 1)), str(rng.choice(ANIMALS)))
        sentences.append(words)
        tags.append([1 if w in ANIMALS else 0 for w in words])
    tagger = keras_albert.AlbertTokenClassifier.from_preset(
        PRESET, num_classes=2,
        preprocessor=keras_albert.AlbertTokenClassifierPreprocessor.from_preset(PRESET, sequence_length=48),
    )
    tagger.compile(optimizer=keras.optimizers.Adam(1e-4))
    tagger.fit(word_label_dataset(sentences[:500], tags[:500], batch_size=32), epochs=3, verbose=2)
    predicted = tagger.predict_word_labels(sentences[500:])
    accuracy = np.mean(np.concatenate(predicted) == np.concatenate(tags[500:]))
    print(f"token classification: word accuracy {accuracy:.3f}; {sentences[500]} -> {predicted[0]}")


if __name__ == "__main__":
    question_answering()
    multiple_choice()
    token_classification()
