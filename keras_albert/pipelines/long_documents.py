"""Fine-tune and score one model on the long-document task at one length.

A row of `benchmarks/long_document_quality.py`: the preset's backbone, its
positions extended (copy-initialised) when the context is longer than the
preset's, made LSH (warm-started from the full weights) if asked, with the
classifier head on the mean of the token outputs by default (`pooling`:
with LSH, [CLS] attends only to its bucket); fine-tuned with the
project's recipe (`fine_tune_classifier`) on the task's training passages
cut to the context, the best epoch picked on the validation chapters, and
scored on the test chapters. Each training step is timed as it runs, so
the reported step time is that of the real fine-tuning.

Under the benchmarks' protocol (benchmarks/README.md, "How quality is
measured") `carve_out_task` draws, per seed, the chapters that choose
(the carve-out) from the chapters that are not test; `tune_long_document_row`
fits every candidate setting and keeps the one with the best carve-out
accuracy, reporting only its test scores (each carve-out leader is scored
as it takes the lead, so a stopped grid resumes without weights); and
`tuned_tfidf_long_document_row` picks TF-IDF's C and n-grams on the same
carve-out. `tfidf_long_document_row` is TF-IDF + LinearSVC untuned, on the
same truncated passages.
"""

import dataclasses
import functools
import math
import time
import zlib

import keras
import numpy as np

from keras_albert.datasets.long_documents import LongDocumentTask
from keras_albert.datasets.long_documents import build_long_document_task
from keras_albert.editing.lsh_warm_start import lsh_backbone_from
from keras_albert.editing.position_extension import extend_positions
from keras_albert.layers.lsh_hashing import reformer_num_buckets
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_classifier import POOLING_CHOICES
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.pipelines.classifier_fine_tuning import ClassifierRecipe
from keras_albert.pipelines.classifier_fine_tuning import fine_tune_classifier
from keras_albert.pipelines.text_baselines import TFIDF_C
from keras_albert.pipelines.text_baselines import TFIDF_NGRAM_RANGES
from keras_albert.pipelines.text_baselines import classification_scores
from keras_albert.pipelines.text_baselines import majority_baseline
from keras_albert.pipelines.text_baselines import tfidf_baseline
from keras_albert.utils.validation import check_choice
from keras_albert.utils.validation import check_non_negative_int
from keras_albert.utils.validation import check_positive_int

ATTENTION_KINDS = ("full", "lsh")
# The carve-out's share of each novel's passages outside the test chapters:
# the chapter split's own validation share (15 % of a novel of the 75 %
# that test leaves).
CARVE_OUT_FRACTION = 0.2
# Steps timed before a row's fine-tuning time is projected against
# `max_hours` (the first step, which traces the graph, is not counted).
PROBE_STEPS = 3


def long_document_recipe(**overrides):
    """The project's recipe with batches of 8: 64 passages of thousands of
    pieces do not fit in memory with full attention."""
    return ClassifierRecipe(**{"batch_size": 8, **overrides})


@dataclasses.dataclass
class LongDocumentSettings:
    """One model at one context length.

    `sequence_length` includes [CLS] and [SEP]: the model reads the first
    `sequence_length - 2` pieces of each passage. LSH settings are used only
    with `attention="lsh"`; `lsh_num_buckets=0` takes Reformer's choice,
    `2 * sequence_length / lsh_chunk_length`, in two factors above
    `2 * lsh_chunk_length` (`keras_albert.layers.reformer_num_buckets`).
    `pooling` is the classifier's ("mean" or "cls"); the mean is the
    default because a passage's novel shows in all of its words, and with
    LSH attention [CLS] reads only the tokens hashed into its bucket.
    `max_hours` > 0 stops a row
    whose projected fine-tuning time (timed steps x planned steps) exceeds
    it, and records the projection instead of scores.
    """

    sequence_length: int = 2048
    attention: str = "full"
    preset: str = "albert_tiny_en"
    recipe: ClassifierRecipe = dataclasses.field(default_factory=long_document_recipe)
    lsh_num_hashes: int = 1
    lsh_chunk_length: int = 64
    lsh_num_buckets: int = 0
    lsh_num_chunks_after: int = 1
    pooling: str = "mean"
    seed: int = 0
    max_hours: float = 0.0

    @property
    def name(self):
        """'full-512', 'lsh4-2048': how results files key the row."""
        kind = "full" if self.attention == "full" else f"lsh{self.lsh_num_hashes}"
        return f"{kind}-{self.sequence_length}"

    @property
    def num_buckets(self):
        if self.lsh_num_buckets:
            return self.lsh_num_buckets
        return reformer_num_buckets(self.sequence_length, self.lsh_chunk_length)

    def check(self):
        check_positive_int("sequence_length", self.sequence_length)
        if self.sequence_length < 8:
            raise ValueError(
                "`sequence_length` must be at least 8 ([CLS], [SEP] and some text). "
                f"Received: sequence_length={self.sequence_length}"
            )
        check_choice("attention", self.attention, ATTENTION_KINDS)
        check_choice("pooling", self.pooling, POOLING_CHOICES)
        if not isinstance(self.preset, str) or not self.preset:
            raise ValueError(f"`preset` must be a preset name or directory. Received: preset={self.preset!r}")
        if not isinstance(self.recipe, ClassifierRecipe):
            raise ValueError(
                f"`recipe` must be a ClassifierRecipe. Received: recipe={type(self.recipe).__name__}"
            )
        self.recipe.check()
        check_non_negative_int("seed", self.seed)
        if isinstance(self.max_hours, bool) or not isinstance(self.max_hours, (int, float)) or self.max_hours < 0:
            raise ValueError(f"`max_hours` must be a number >= 0 (0: no limit). Received: max_hours={self.max_hours!r}")
        if self.attention == "lsh":
            check_positive_int("lsh_num_hashes", self.lsh_num_hashes)
            check_positive_int("lsh_chunk_length", self.lsh_chunk_length)
            check_non_negative_int("lsh_num_chunks_after", self.lsh_num_chunks_after)
            check_non_negative_int("lsh_num_buckets", self.lsh_num_buckets)
            if self.lsh_num_buckets % 2 and self.lsh_num_buckets != 1:
                raise ValueError(
                    "`lsh_num_buckets` must be 0 (automatic), 1 or even. "
                    f"Received: lsh_num_buckets={self.lsh_num_buckets}"
                )
            if self.lsh_chunk_length > self.sequence_length:
                raise ValueError(
                    f"`lsh_chunk_length` ({self.lsh_chunk_length}) must not exceed "
                    f"`sequence_length` ({self.sequence_length})."
                )
        return self


class TokenizerPieces:
    """The preset tokenizer in the plain-list form the task builder reads."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def get_vocabulary(self):
        return self.tokenizer.get_vocabulary()

    def tokenize(self, texts):
        return [np.asarray(ids).tolist() for ids in self.tokenizer.tokenize(texts)]

    def detokenize(self, ids):
        return [str(text) for text in self.tokenizer.detokenize(ids)]


# Building tokenizes all six novels (seconds): runs in one process share it.
@functools.lru_cache(maxsize=4)
def long_document_task(preset="albert_tiny_en", sequence_length=2048, **task_arguments):
    """The long-document task in `preset`'s pieces, passages filling
    `sequence_length` (see `keras_albert.datasets.long_documents`); the
    same arguments give the same (shared) task."""
    check_positive_int("sequence_length", sequence_length)
    if sequence_length < 8:
        raise ValueError(f"`sequence_length` must be at least 8. Received: sequence_length={sequence_length}")
    tokenizer = AlbertTokenizer.from_preset(preset)
    return build_long_document_task(TokenizerPieces(tokenizer), sequence_length - 2, **task_arguments)


def _chapters(passage):
    return {chapter for _, chapter in passage.chapters}


def carve_out_task(task, seed, fraction=CARVE_OUT_FRACTION):
    """`task` with its training and validation passages drawn again by `seed`.

    The test passages stay as they are. Each novel's other passages (the
    task's train then validation passages, each in book order) are taken
    as a ring; the carve-out ("validation" of the returned task) is a run
    of `fraction` of them, consecutive on the ring, from a place drawn by
    `seed`; "train" is every other passage that reads no chapter the run
    reads. A passage sharing a chapter with the run's first or last passage
    is dropped, so the two parts share no text (a few passages per novel).
    Every novel is in both parts.

    Returns:
        A `LongDocumentTask` whose "train" fits, "validation" chooses
        (epochs, warm start, settings) and "test" is `task`'s.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an integer >= 0. Received: seed={seed!r}")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 0.5:
        raise ValueError(f"`fraction` must be a number in (0, 0.5). Received: fraction={fraction!r}")
    pool = list(task.passages["train"]) + list(task.passages["validation"])
    fit, carve_out = [], []
    for label, novel in enumerate(task.novels):
        mine = [passage for passage in pool if passage.label == label]
        wanted = max(1, math.ceil(fraction * len(mine)))
        # The novel's CRC, not hash(): the same draw in every process.
        start = int(np.random.default_rng([seed, zlib.crc32(novel.encode())]).integers(len(mine)))
        picked = {(start + step) % len(mine) for step in range(wanted)}
        held = [mine[i] for i in sorted(picked)]
        read = set().union(*(_chapters(passage) for passage in held))
        kept = [passage for i, passage in enumerate(mine) if i not in picked and not _chapters(passage) & read]
        if not kept:
            raise ValueError(
                f"{novel!r} has {len(mine)} passages outside the test chapters: too few to carve "
                f"out {fraction:.0%} by chapter and train on the rest. Use shorter passages."
            )
        fit += kept
        carve_out += held
    return LongDocumentTask(
        {"train": fit, "validation": carve_out, "test": list(task.passages["test"])},
        task.novels, task.passage_pieces, task.seed, task.train_shifts, task.names_masked,
        task._detokenize,
    )


def long_document_classifier(settings, num_classes):
    """The preset as a classifier reading `settings.sequence_length`."""
    settings.check()
    backbone = AlbertBackbone.from_preset(settings.preset)
    if settings.sequence_length > backbone.max_sequence_length:
        backbone = extend_positions(backbone, settings.sequence_length)
    if settings.attention == "lsh":
        backbone = lsh_backbone_from(
            backbone,
            lsh_num_hashes=settings.lsh_num_hashes,
            lsh_num_buckets=settings.num_buckets,
            lsh_chunk_length=settings.lsh_chunk_length,
            lsh_num_chunks_after=settings.lsh_num_chunks_after,
            lsh_seed=settings.seed,
        )
    preprocessor = AlbertTextClassifierPreprocessor.from_preset(
        settings.preset, sequence_length=settings.sequence_length
    )
    return AlbertClassifier(backbone, num_classes=num_classes, preprocessor=preprocessor,
                            pooling=settings.pooling)


class StepTimer(keras.callbacks.Callback):
    """Times each training step; stops training early when the projected
    time of all `planned_steps` exceeds `max_seconds` (0: never)."""

    def __init__(self, planned_steps, max_seconds=0.0):
        super().__init__()
        self.planned_steps = planned_steps
        self.max_seconds = max_seconds
        self.seconds = []
        self.first_step_seconds = None
        self.projected_seconds = None
        self._started = None

    def on_train_batch_begin(self, batch, logs=None):
        self._started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        elapsed = time.perf_counter() - self._started
        if self.first_step_seconds is None:
            self.first_step_seconds = elapsed  # includes tracing: not a step time
            return
        self.seconds.append(elapsed)
        if self.max_seconds and len(self.seconds) == PROBE_STEPS:
            self.projected_seconds = float(np.median(self.seconds)) * self.planned_steps
            if self.projected_seconds > self.max_seconds:
                self.model.stop_training = True

    @property
    def over_budget(self):
        return bool(self.max_seconds) and (self.projected_seconds or 0) > self.max_seconds

    def spread(self):
        return step_spread(self.seconds)


def step_spread(seconds):
    """Median, min and max of step times (NaN for none) and their count."""
    values = np.asarray(seconds or [np.nan])
    return {
        "median": round(float(np.median(values)), 4),
        "min": round(float(values.min()), 4),
        "max": round(float(values.max()), 4),
        "steps": len(seconds),
    }


def fit_long_document_candidate(task, settings, verbose=2, callbacks=()):
    """Fine-tunes one model on `task`'s training passages, the best epoch
    (the probe counting as epoch 0) picked on its validation passages.
    Reads nothing of the test split. `callbacks` (Keras callbacks) join
    the fine-tuning's own.

    Returns:
        (classifier, row): the row holds the carve-out accuracy of the kept
        epoch (`carve_out_accuracy`), the step times and, with `max_hours`
        set and exceeded, status "over_time_budget" and the projection
        (the classifier is then None).
    """
    settings.check()
    recipe = settings.recipe
    pieces = settings.sequence_length - 2
    keras.utils.set_random_seed(settings.seed)
    classifier = long_document_classifier(settings, task.num_classes)
    train_texts, train_labels = task.texts("train", pieces), task.labels("train")
    planned_steps = recipe.epochs * -(-len(train_texts) // recipe.batch_size)
    timer = StepTimer(planned_steps, 3600.0 * settings.max_hours)
    row = {
        "name": settings.name,
        "model": settings.attention,
        "sequence_length": settings.sequence_length,
        "train_passages": len(train_texts),
        "carve_out_passages": len(task.labels("validation")),
        "learning_rate": recipe.learning_rate,
        "pooling": settings.pooling,
        "head_warm_start": recipe.head_warm_start,
    }
    if settings.attention == "lsh":
        row["lsh"] = {
            "num_hashes": settings.lsh_num_hashes,
            "num_buckets": settings.num_buckets,
            "chunk_length": settings.lsh_chunk_length,
            "num_chunks_after": settings.lsh_num_chunks_after,
        }
    started = time.perf_counter()
    history = fine_tune_classifier(
        classifier, train_texts, train_labels, recipe, seed=settings.seed, verbose=verbose,
        callbacks=[timer, *callbacks],
        validation_data=(task.texts("validation", pieces), task.labels("validation")),
    )
    row["fine_tune_seconds"] = round(time.perf_counter() - started, 1)
    row["first_step_seconds"] = round(timer.first_step_seconds or 0.0, 3)
    row["step_seconds"] = timer.spread()
    if timer.over_budget:
        row.update(status="over_time_budget", projected_hours=round(timer.projected_seconds / 3600, 2),
                   max_hours=settings.max_hours)
        return None, row
    row["epochs_run"] = len(history.history["loss"])
    row["validation_accuracy"] = [
        round(float(v), 4) for v in history.history.get("val_sparse_categorical_accuracy", [])
    ]
    kept = list(row["validation_accuracy"])
    if "head_warm_start_val_accuracy" in history.history:
        row["head_warm_start_val_accuracy"] = round(history.history["head_warm_start_val_accuracy"], 4)
        row["kept_head_warm_start"] = bool(history.history.get("kept_head_warm_start"))
        kept.append(row["head_warm_start_val_accuracy"])
    # The classifier holds the best epoch's weights (or the probe's).
    row["carve_out_accuracy"] = max(kept)
    row["status"] = "fitted"
    return classifier, row


def score_long_document_candidate(classifier, task, settings):
    """Test accuracy and macro-F1 of a fitted classifier (a dict)."""
    pieces = settings.sequence_length - 2
    started = time.perf_counter()
    logits = classifier.predict(task.texts("test", pieces), batch_size=settings.recipe.batch_size, verbose=0)
    scores = classification_scores(task.labels("test"), logits.argmax(-1))
    scores["test_passages"] = len(task.labels("test"))
    scores["evaluate_seconds"] = round(time.perf_counter() - started, 1)
    return scores


def tune_long_document_row(task, candidates, verbose=2, progress=None, callbacks=()):
    """Fits every candidate (`LongDocumentSettings` of one row: same model
    and length, other learning rate, pooling or warm start) and keeps the
    one with the best carve-out accuracy (the first of equals).

    The choice reads nothing of the test passages. A candidate that takes
    the carve-out's lead is scored on them at once, while its weights are
    in memory, and a later leader's scores replace its own: the scores
    returned are those of the final pick, as if it alone were scored at the
    end, and a stopped grid needs no weights to go on.

    With `progress` (a `CandidateProgress`), each fitted candidate is
    recorded as it finishes, with the leader's scores, and a later call
    with the same candidates goes on after the last recorded one.
    `callbacks` join each candidate's fine-tuning (e.g. one that stops).

    Returns:
        The chosen candidate's row with its test scores, and `candidates`:
        each one's row without test scores. Status "over_time_budget" when
        every candidate exceeded `max_hours`.
    """
    candidates = list(candidates)
    if not candidates or len({c.name for c in candidates}) != 1:
        raise ValueError(
            "`candidates` must be LongDocumentSettings of one row (one model and length). "
            f"Received: {sorted({c.name for c in candidates})}"
        )
    fitted, best, best_scores = progress.load(candidates) if progress else ([], None, None)
    if fitted:
        print(f"{candidates[0].name}: {len(fitted)} of {len(candidates)} candidates fitted before; "
              "going on from there", flush=True)
    for index in range(len(fitted), len(candidates)):
        classifier, row = fit_long_document_candidate(task, candidates[index], verbose=verbose,
                                                      callbacks=callbacks)
        fitted.append(row)
        if classifier is not None and (
                best is None or row["carve_out_accuracy"] > fitted[best]["carve_out_accuracy"]):
            best, best_scores = index, score_long_document_candidate(classifier, task, candidates[index])
        del classifier
        if progress:
            progress.save(candidates, fitted, best, best_scores)
    if best is None:
        row = dict(fitted[-1], candidates=fitted)
        row["projected_hours"] = min(c["projected_hours"] for c in fitted)
        return row
    row = dict(fitted[best])
    row.update(best_scores)
    row.update(status="done", chosen_candidate=best, candidates=fitted)
    return row


def run_long_document_row(task, settings, verbose=2):
    """Fine-tunes and scores one model; returns its row (a dict).

    Args:
        task: a `LongDocumentTask` (`long_document_task(...)`).
        settings: a `LongDocumentSettings`.
        verbose: Keras `fit` verbosity.

    Returns:
        {"name", "status": "done", "accuracy", "macro_f1", "step_seconds"
        (median/min/max over the timed steps), ...}; with `max_hours` set
        and exceeded, status "over_time_budget" and the projection instead.
    """
    classifier, row = fit_long_document_candidate(task, settings, verbose=verbose)
    if classifier is None:
        return row
    row.update(score_long_document_candidate(classifier, task, settings))
    row["status"] = "done"
    return row


def tfidf_long_document_row(task, sequence_length):
    """TF-IDF + LinearSVC on the first `sequence_length - 2` pieces."""
    check_positive_int("sequence_length", sequence_length)
    pieces = max(1, sequence_length - 2)
    result = tfidf_baseline(
        task.texts("train", pieces), task.labels("train"),
        task.texts("test", pieces), task.labels("test"),
    )
    return {
        "name": f"tfidf-{sequence_length}",
        "model": "tfidf",
        "sequence_length": sequence_length,
        "train_passages": len(task.labels("train")),
        "test_passages": len(task.labels("test")),
        "accuracy": result["accuracy"],
        "macro_f1": result["macro_f1"],
        "fine_tune_seconds": result["seconds"],
        "status": "done",
    }


def tuned_tfidf_long_document_row(task, sequence_length):
    """TF-IDF + LinearSVC on the first `sequence_length - 2` pieces, C and
    the word n-gram range (`TFIDF_C` x `TFIDF_NGRAM_RANGES`) picked by
    accuracy on the validation passages (ties: fewer n-grams, then the
    smaller C), then refitted on training and validation passages together
    and scored on the test passages, as `tuned_tfidf_baseline` does with a
    random carve-out, which passages of one chapter must not have."""
    check_positive_int("sequence_length", sequence_length)
    pieces = max(1, sequence_length - 2)
    started = time.perf_counter()
    train = task.texts("train", pieces), task.labels("train")
    held = task.texts("validation", pieces), task.labels("validation")
    scores = {
        (c, ngrams): tfidf_baseline(*train, *held, C=c, ngram_range=ngrams)["accuracy"]
        for ngrams in TFIDF_NGRAM_RANGES for c in TFIDF_C
    }
    best_c, best_ngrams = max(scores, key=lambda key: (scores[key], -key[1][1], -key[0]))
    result = tfidf_baseline(
        list(train[0]) + list(held[0]), np.concatenate([train[1], held[1]]),
        task.texts("test", pieces), task.labels("test"), C=best_c, ngram_range=best_ngrams,
    )
    return {
        "name": f"tfidf-{sequence_length}",
        "model": "tfidf",
        "sequence_length": sequence_length,
        "train_passages": len(train[1]) + len(held[1]),
        "carve_out_passages": len(held[1]),
        "test_passages": len(task.labels("test")),
        "C": best_c,
        "ngram_range": list(best_ngrams),
        "carve_out_accuracy": round(scores[(best_c, best_ngrams)], 4),
        "accuracy": result["accuracy"],
        "macro_f1": result["macro_f1"],
        "fine_tune_seconds": round(time.perf_counter() - started, 2),
        "status": "done",
    }


def majority_long_document_row(task):
    """The most frequent novel among the training and validation passages,
    predicted for every test passage."""
    labels = np.concatenate([task.labels("train"), task.labels("validation")])
    result = majority_baseline(labels, task.labels("test"))
    return {
        "name": "majority",
        "model": "majority",
        "majority_label": int(result["majority_label"]),
        "majority_novel": task.novels[int(result["majority_label"])],
        "test_passages": len(task.labels("test")),
        "accuracy": result["accuracy"],
        "macro_f1": result["macro_f1"],
        "status": "done",
    }
