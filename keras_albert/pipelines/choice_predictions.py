"""`predict` and `evaluate` with a multiple-choice preset: one choice per question.

What `finetune --task=multiple_choice` writes (RACE) reads the same files
here: RACE JSON records (`article`, `questions`, `options`, and for
`evaluate` the `answers`), one file or a directory of them. Each question
gets the probability of each option and the most probable one, by letter
and by text.
"""

import logging

import keras
import numpy as np

from keras_albert.data.task_files import TaskFileError
from keras_albert.data.task_files import read_race
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_multiple_choice_preprocessor import (
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.length_buckets import CHUNK_BATCHES
from keras_albert.pipelines.task_preset_loading import load_task_preset
from keras_albert.utils.progress import logged_chunks
from keras_albert.utils.row_output import rows_as_text

_logger = logging.getLogger(__name__)


def read_questions(path, flag, labelled):
    """The `ChoiceExample`s of RACE files at `path`, all with one number of
    options (the model scores them in batches); errors name `flag`."""
    try:
        examples = read_race(path, labelled=labelled)
    except (TaskFileError, OSError) as error:
        raise ValueError(f"`{flag}` {path!r} is not RACE JSON for this multiple-choice preset: {error}") from None
    counts = sorted({len(e.choices) for e in examples})
    if len(counts) != 1:
        raise ValueError(f"`{flag}` {path!r}: every question needs the same number of options; found {counts}.")
    return examples


def choice_inputs(examples):
    """The multiple-choice model's raw input for `ChoiceExample`s."""
    return {"context": [e.context for e in examples], "question": [e.question for e in examples],
            "choices": [list(e.choices) for e in examples]}


class PresetChooser:
    """A multiple-choice preset; `probabilities(examples, batch_size)`
    scores each example's options."""

    def __init__(self, preset, directory, sequence_length=None):
        self.source = f"preset {preset!r}"
        self.model = load_task_preset(
            AlbertMultipleChoice, AlbertMultipleChoicePreprocessor, preset, directory, sequence_length)

    def probabilities(self, examples, batch_size):
        """[questions, options] probabilities, in order; inputs longer than
        one chunk log their progress."""
        count, chunk = len(examples), batch_size * CHUNK_BATCHES
        _logger.info("Choosing for %s question%s in batches of %d with the %s", f"{count:,}",
                     "" if count == 1 else "s", batch_size, self.source)
        parts = []
        for start, stop in logged_chunks(_logger, count, chunk, "Questions scored"):
            logits = self.model.predict(choice_inputs(examples[start:stop]), batch_size=batch_size, verbose=0)
            parts.append(keras.ops.convert_to_numpy(keras.ops.softmax(logits, axis=-1)))
        return np.concatenate(parts)


def choice_rows(examples, probabilities):
    """One dict per question: the question, its options, the chosen
    option's letter and text, its probability and every option's."""
    rows = []
    for example, row in zip(examples, probabilities):
        letters = [chr(ord("A") + k) for k in range(len(example.choices))]
        best = int(row.argmax())
        rows.append({"question": example.question, "options": list(example.choices), "choice": letters[best],
                     "answer": example.choices[best], "probability": round(float(row[best]), 6),
                     "probabilities": {letter: round(float(p), 6) for letter, p in zip(letters, row)}})
    return rows


def format_choice_rows(rows, output_format):
    """JSON lines, or TSV with a header: question, choice, answer,
    probability, then one `p(LETTER)` column per option."""
    header = ["question", "choice", "answer", "probability"] + [f"p({letter})" for letter in rows[0]["probabilities"]]
    return rows_as_text(rows, output_format, header, lambda row: [
        row["question"], row["choice"], row["answer"], row["probability"], *row["probabilities"].values()])
