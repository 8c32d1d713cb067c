"""Packs the fine-tuning tasks' inputs with TensorFlow unimportable (the
preprocessors' Python path, SentencePiece's Python normalisation for span
QA's windows) and writes the arrays, for a TensorFlow process to compare
with its tf.strings / tf.ragged path.

    KERAS_BACKEND=jax python tests/backends/task_packing_worker.py OUT.npz
"""

import sys

if __name__ == "__main__":
    sys.modules["tensorflow"] = None
    sys.modules["tensorflow_text"] = None

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402

SEQUENCE_LENGTH = 24
# Accents, LaTeX quotes, odd spaces, a blank to fill, a context long
# enough to be truncated round robin.
CHOICES = {
    "context": [
        "Anne stayed at home with her sister, reading a very long letter from Bath about the ball.",
        "Crème brûlée  AND naïve café",
    ],
    "question": ["Where was _ Anne?", "What is it?"],
    "choices": [["at home", "at sea", "in Bath"], ["food", "a ``drink''", "Ünïcode\u00a0x"]],
}
# A bare combining mark (no pieces), accents, a sentence cut at the
# sequence length; whole texts split on ASCII whitespace only.
WORDS = [
    ["Anne", "Elliot", "walked", "to", "Kellynch", "Hall", "\u0301", "slowly"],
    ["Crème", "brûlée", "and", "naïve", "café"],
    ["a", "horse"] * 12,
]
WORD_LABELS = [[1, 2, 0, 0, 3, 3, 1, 0], [4, 0, 4, 1, 2], [0, 1] * 12]
TEXTS = ["Crème\u00a0brûlée  and\tnaïve café", " Anne  walked home "]
# Span QA: contexts longer than one window (doc_stride 8), accents, an
# answer past the first window and one with no answer.
QUESTIONS = ["Where did Anne walk?", "Who made the crème brûlée?"]
CONTEXTS = [
    "Anne Elliot walked slowly from Kellynch Hall, past the old church and the river, to Uppercross.",
    "The naïve cook, Mrs. Musgrove, made the crème brûlée for dinner.",
]
ANSWERS = [("to Uppercross", CONTEXTS[0].index("to Uppercross")), None]


def pack(preset="albert_tiny_en"):
    """{name: array} from every task's preprocessor on this backend."""
    arrays = {}
    choice = keras_albert.AlbertMultipleChoicePreprocessor.from_preset(preset, sequence_length=SEQUENCE_LENGTH)
    for name, value in choice(CHOICES).items():
        arrays[f"choices_{name}"] = value
    token = keras_albert.AlbertTokenClassifierPreprocessor.from_preset(preset, sequence_length=SEQUENCE_LENGTH)
    features, labels, weights = token(WORDS, WORD_LABELS)
    for name, value in features.items():
        arrays[f"words_{name}"] = value
    arrays["words_labels"], arrays["words_weights"] = labels, weights
    arrays["words_word_ids"] = token.word_ids(WORDS)
    for name, value in token(TEXTS).items():
        arrays[f"texts_{name}"] = value
    squad = keras_albert.AlbertQuestionAnswererPreprocessor.from_preset(
        preset, sequence_length=SEQUENCE_LENGTH, doc_stride=8)
    windows = squad.windows(QUESTIONS, CONTEXTS, ANSWERS)
    for name, value in windows.features.items():
        arrays[f"windows_{name}"] = value
    for name in ("start_positions", "end_positions", "example_index", "position_word", "max_context"):
        arrays[f"windows_{name}"] = getattr(windows, name)
    return {name: keras.ops.convert_to_numpy(value) for name, value in arrays.items()}


if __name__ == "__main__":
    np.savez(sys.argv[1], **pack())
