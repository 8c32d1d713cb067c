"""`predict` with a span question-answering preset: one answer per question.

What `finetune --task=squad` writes (SQuAD) answers the
questions of a table here: each row's question and context (the
`question` and `context` columns unless `--text_columns` names others)
go to `AlbertQuestionAnswerer.answer`, which windows long contexts and
returns the best span as an exact substring of the context.
"""

import logging
import math

from keras_albert.data import task_metrics
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_question_answerer_preprocessor import (
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.length_buckets import CHUNK_BATCHES
from keras_albert.pipelines.task_preset_loading import load_task_preset
from keras_albert.utils.progress import logged_chunks
from keras_albert.utils.row_output import rows_as_text

_logger = logging.getLogger(__name__)
# The table columns read when `--text_columns` is left at its default.
QUESTION_COLUMNS = ("question", "context")


class PresetAnswerer:
    """A question-answering preset; `rows(questions, contexts, ...)`
    answers them."""

    def __init__(self, preset, directory, sequence_length=None):
        self.source = f"preset {preset!r}"
        self.model = load_task_preset(
            AlbertQuestionAnswerer, AlbertQuestionAnswererPreprocessor, preset, directory, sequence_length)

    def rows(self, questions, contexts, batch_size, allow_no_answer=False):
        """One dict per question, in order: the question, its context, the
        answer ("" for none, with `allow_no_answer`), its character span in
        the context and its score; inputs longer than one chunk log their
        progress."""
        count, chunk = len(questions), batch_size * CHUNK_BATCHES
        _logger.info("Answering %s question%s in batches of %d with the %s", f"{count:,}",
                     "" if count == 1 else "s", batch_size, self.source)
        rows = []
        for start, stop in logged_chunks(_logger, count, chunk, "Questions answered"):
            answers = self.model.answer(questions[start:stop], contexts[start:stop],
                                        allow_no_answer=allow_no_answer, batch_size=batch_size)
            for question, context, answer in zip(questions[start:stop], contexts[start:stop], answers):
                rows.append({"question": question, "context": context, "answer": answer["text"],
                             "start": answer["start"], "end": answer["end"],
                             "score": _finite_or_none(answer["score"])})
        return rows


def squad_scores_of(model, examples, allow_no_answer, batch_size):
    """SQuAD's F1 and exact match (percent) of `model`'s answers to
    `examples` (`SquadExample`s), as `finetune` and `evaluate` score them."""
    predicted = model.answer([e.question for e in examples], [e.context for e in examples],
                             allow_no_answer=allow_no_answer, batch_size=batch_size)
    scores = task_metrics.squad_scores([p["text"] for p in predicted], [[a for a, _ in e.answers] for e in examples])
    return {"f1": scores["f1"], "exact_match": scores["exact_match"]}


def _finite_or_none(score):
    # A context too short for any span scores -inf, which JSON cannot hold.
    return round(float(score), 6) if math.isfinite(score) else None


def format_answer_rows(rows, output_format):
    """JSON lines, or TSV with a header: question, answer, start, end and
    score (the context stays in the JSON lines)."""
    columns = ["question", "answer", "start", "end", "score"]
    return rows_as_text(rows, output_format, columns, lambda row: [row[column] for column in columns])
