"""One long-document row: settings checked, the model built, fine-tuned, scored, timed;
the protocol's carve-out drawn by chapter and the test split read only after choosing."""

import numpy as np
import pytest

from keras_albert import datasets
from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED
from keras_albert.pipelines import ClassifierRecipe
from keras_albert.pipelines import long_documents
from keras_albert.pipelines.long_documents import PROBE_STEPS
from keras_albert.pipelines.long_documents import LongDocumentSettings
from keras_albert.pipelines.long_documents import carve_out_task
from keras_albert.pipelines.long_documents import fit_long_document_candidate
from keras_albert.pipelines.long_documents import long_document_classifier
from keras_albert.pipelines.long_documents import long_document_recipe
from keras_albert.pipelines.long_documents import long_document_task
from keras_albert.pipelines.long_documents import run_long_document_row
from keras_albert.pipelines.long_documents import tfidf_long_document_row
from keras_albert.pipelines.long_documents import tune_long_document_row
from keras_albert.pipelines.long_documents import tuned_tfidf_long_document_row


@pytest.fixture(scope="module")
def tiny_task():
    # Passages of 62 pieces, 3 per novel and split: 18 to train on.
    return long_document_task("albert_tiny_en", 64, max_passages_per_class=3)


@pytest.fixture(scope="module")
def task_512():
    # Every passage of 510 pieces: about 1,300 outside the test chapters.
    return long_document_task("albert_tiny_en", 512)


def _chapters(passages):
    return {chapter for passage in passages for chapter in passage.chapters}


def test_the_carve_out_shares_no_chapter_with_training_and_test_stays(task_512):
    pool = len(task_512.passages["train"]) + len(task_512.passages["validation"])
    carved = {seed: carve_out_task(task_512, seed) for seed in (0, 1, 2)}
    for seed, split in carved.items():
        fit, held = split.passages["train"], split.passages["validation"]
        assert not _chapters(fit) & _chapters(held)
        assert split.passages["test"] == task_512.passages["test"]
        # A fifth of each novel; a few passages at the run's ends dropped.
        counts = split.counts()
        for novel in task_512.novels:
            novel_pool = sum(task_512.counts()[part][novel] for part in ("train", "validation"))
            assert counts["validation"][novel] == -(-novel_pool // 5)
            assert counts["train"][novel] > 0
        assert 0.9 * pool < len(fit) + len(held) <= pool
        # Seeded: the same seed carves the same passages.
        again = carve_out_task(task_512, seed).passages["validation"]
        assert [p.chapters for p in again] == [p.chapters for p in held]
    # Each seed carves other chapters.
    held = [_chapters(split.passages["validation"]) for split in carved.values()]
    assert held[0] != held[1] and held[1] != held[2] and held[0] != held[2]


def test_every_seed_is_tested_on_the_chapters_kept_out_of_pretraining(task_512):
    held_out = datasets.split_chapters(seed=LONG_DOCUMENT_SEED)["test"]
    expected = {(novel, index) for novel, indices in held_out.items() for index in indices}
    for seed in (0, 1, 2):
        tested = _chapters(carve_out_task(task_512, seed).passages["test"])
        # Passages cover the test chapters (a chapter shorter than a
        # passage's remainder may be read only inside a neighbour's).
        assert tested <= expected and len(tested) > 0.9 * len(expected)
    assert task_512.seed == LONG_DOCUMENT_SEED


@pytest.mark.parametrize("arguments, message", [
    ({"seed": -1}, "seed"), ({"seed": 1.0}, "seed"), ({"fraction": 0.5}, "fraction"), ({"fraction": 0}, "fraction"),
])
def test_bad_carve_out_arguments_are_named(tiny_task, arguments, message):
    with pytest.raises(ValueError, match=message):
        carve_out_task(tiny_task, **{"seed": 0, **arguments})


class _TestSplitWatch:
    """A task whose test split logs every read (or refuses it)."""

    def __init__(self, task, log, refuse=False):
        self.task, self.log, self.refuse = task, log, refuse
        self.num_classes = task.num_classes

    def texts(self, split, max_pieces=None):
        self._read(split)
        return self.task.texts(split, max_pieces)

    def labels(self, split):
        self._read(split)
        return self.task.labels(split)

    def _read(self, split):
        if split == "test":
            if self.refuse:
                raise AssertionError("the test split was read while choosing")
            self.log.append("test read")


def test_tuning_scores_only_carve_out_leaders_and_reports_the_final_pick(tiny_task, monkeypatch):
    log = []
    carve_out_accuracy = {1e-3: 0.3, 2e-4: 0.5, 5e-4: 0.5}

    def fit(task, settings, verbose, callbacks=()):
        task.texts("train", 8), task.texts("validation", 8)
        log.append(f"fit {settings.recipe.learning_rate:g}")
        return f"model {settings.recipe.learning_rate:g}", {
            "carve_out_accuracy": carve_out_accuracy[settings.recipe.learning_rate]}

    def score(classifier, task, settings):
        task.labels("test")
        log.append(f"scored {classifier}")
        return {"accuracy": settings.recipe.learning_rate, "test_passages": 18}

    monkeypatch.setattr(long_documents, "fit_long_document_candidate", fit)
    monkeypatch.setattr(long_documents, "score_long_document_candidate", score)
    grid = [LongDocumentSettings(sequence_length=64, recipe=long_document_recipe(learning_rate=rate))
            for rate in carve_out_accuracy]
    row = tune_long_document_row(_TestSplitWatch(tiny_task, log), grid)
    # Fitting never reads the test split; a candidate is scored when it takes
    # the carve-out's lead (an equal one does not), and the first of the two
    # best is the pick whose scores are reported.
    assert log == ["fit 0.001", "test read", "scored model 0.001",
                   "fit 0.0002", "test read", "scored model 0.0002", "fit 0.0005"]
    assert row["chosen_candidate"] == 1 and row["status"] == "done" and row["accuracy"] == 2e-4
    assert [c["carve_out_accuracy"] for c in row["candidates"]] == [0.3, 0.5, 0.5]
    assert all("accuracy" not in c for c in row["candidates"])
    with pytest.raises(ValueError, match="one row"):
        tune_long_document_row(tiny_task, [grid[0], LongDocumentSettings(sequence_length=32)])


def test_tfidf_is_tuned_on_the_carve_out_without_the_test_split(tiny_task, monkeypatch):
    split = carve_out_task(tiny_task, 0)
    test_texts = split.texts("test", 30)
    calls = []
    real = long_documents.tfidf_baseline

    def spy(train_texts, train_labels, eval_texts, eval_labels=None, C=1.0, ngram_range=(1, 2)):
        calls.append((list(eval_texts) == test_texts, C, tuple(ngram_range), len(train_texts)))
        return real(train_texts, train_labels, eval_texts, eval_labels, C=C, ngram_range=ngram_range)

    monkeypatch.setattr(long_documents, "tfidf_baseline", spy)
    row = tuned_tfidf_long_document_row(split, 32)
    grid = len(long_documents.TFIDF_C) * len(long_documents.TFIDF_NGRAM_RANGES)
    assert [on_test for on_test, *_ in calls] == [False] * grid + [True]
    # Refitted on training and carve-out passages with the carve-out's pick.
    assert calls[-1][1:] == (row["C"], tuple(row["ngram_range"]), row["train_passages"])
    assert row["train_passages"] == len(split.labels("train")) + len(split.labels("validation"))
    assert row["carve_out_passages"] == len(split.labels("validation")) and row["test_passages"] == 18


def test_majority_row_predicts_the_training_majority_on_the_test_labels(tiny_task):
    row = long_documents.majority_long_document_row(carve_out_task(tiny_task, 0))
    assert row["name"] == "majority" and row["test_passages"] == 18
    # 3 test passages of each of 6 novels.
    assert row["accuracy"] == pytest.approx(3 / 18)


def test_settings_name_their_row_and_pick_buckets():
    assert LongDocumentSettings(sequence_length=512).name == "full-512"
    lsh = LongDocumentSettings(sequence_length=2048, attention="lsh", lsh_num_hashes=4)
    assert lsh.name == "lsh4-2048" and lsh.num_buckets == 64
    # A length that is no multiple of the chunk is padded to one.
    assert LongDocumentSettings(sequence_length=100, attention="lsh", lsh_chunk_length=64).num_buckets == 4
    assert LongDocumentSettings(attention="lsh", lsh_num_buckets=8).num_buckets == 8
    # Above 2 * chunk buckets, Reformer's two factors: hashing stays cheap.
    assert LongDocumentSettings(sequence_length=16384, attention="lsh").num_buckets == [16, 32]
    assert LongDocumentSettings().recipe.batch_size == 8


@pytest.mark.parametrize("arguments, message", [
    ({"sequence_length": 4}, "sequence_length"),
    ({"sequence_length": 512.0}, "sequence_length"),
    ({"attention": "sparse"}, "attention"),
    ({"preset": ""}, "preset"),
    ({"recipe": {"epochs": 1}}, "recipe"),
    ({"recipe": ClassifierRecipe(epochs=0)}, "epochs"),
    ({"max_hours": -1}, "max_hours"),
    ({"pooling": "max"}, "pooling"),
    ({"attention": "lsh", "lsh_num_hashes": 0}, "lsh_num_hashes"),
    ({"attention": "lsh", "lsh_num_buckets": 3}, "lsh_num_buckets"),
    ({"attention": "lsh", "sequence_length": 32, "lsh_chunk_length": 64}, "lsh_chunk_length"),
    ({"attention": "lsh", "lsh_num_chunks_after": -1}, "lsh_num_chunks_after"),
])
def test_bad_settings_are_named_before_any_work(arguments, message):
    with pytest.raises(ValueError, match=message):
        LongDocumentSettings(**arguments).check()


def test_classifier_reads_longer_inputs_with_lsh():
    settings = LongDocumentSettings(sequence_length=256, attention="lsh", lsh_num_hashes=2,
                                    lsh_chunk_length=32)
    classifier = long_document_classifier(settings, num_classes=6)
    backbone = classifier.backbone
    assert backbone.max_sequence_length == 256 and backbone.get_config()["attention"] == "lsh"
    assert classifier.preprocessor.sequence_length == 256
    # The head reads every token's output: [CLS] sees only its LSH bucket.
    assert classifier.pooling == "mean"
    assert long_document_classifier(
        LongDocumentSettings(sequence_length=64, pooling="cls"), num_classes=6).pooling == "cls"
    # Positions beyond the preset's 128 start as copies of the learned ones.
    table = next(w for w in backbone.weights if w.path.endswith("position_embeddings")).numpy()
    np.testing.assert_array_equal(table[128:], table[:128])
    assert classifier.predict(["a long passage " * 200, "short"], verbose=0).shape == (2, 6)


def test_tfidf_row_reads_the_truncated_passages(tiny_task):
    short = tfidf_long_document_row(tiny_task, 16)
    full = tfidf_long_document_row(tiny_task, 64)
    assert short["name"] == "tfidf-16" and short["status"] == "done"
    assert short["train_passages"] == 18 and short["test_passages"] == 18
    assert 0 <= short["accuracy"] <= 1 and 0 <= full["macro_f1"] <= 1


@pytest.mark.large
def test_rows_run_end_to_end_on_a_tiny_setting(tiny_task):
    # Batches of 6 divide the 18 passages of each split: one traced shape
    # for the train, validation and test steps (batches of 4 traced two).
    recipe = long_document_recipe(epochs=2, batch_size=6)
    full = run_long_document_row(tiny_task, LongDocumentSettings(sequence_length=64, recipe=recipe), verbose=0)
    # The LSH row without the head warm start (the full row and
    # test_a_candidate_is_fitted_without_reading_the_test_split cover it):
    # on the LSH model it costs a traced prediction and an eager pass.
    lsh = run_long_document_row(tiny_task, LongDocumentSettings(
        sequence_length=160, attention="lsh", lsh_num_hashes=2, lsh_chunk_length=16,
        recipe=long_document_recipe(epochs=2, batch_size=6, head_warm_start=False)), verbose=0)
    for row in (full, lsh):
        assert row["status"] == "done"
        assert 0 <= row["accuracy"] <= 1 and 0 <= row["macro_f1"] <= 1
        assert row["train_passages"] == 18 and row["test_passages"] == 18
        # 3 steps an epoch (18 passages in 6s); all timed but the first.
        assert row["step_seconds"]["steps"] == 2 * 3 - 1
        assert 0 < row["step_seconds"]["min"] <= row["step_seconds"]["median"] <= row["step_seconds"]["max"]
        assert len(row["validation_accuracy"]) == row["epochs_run"] <= 2
    assert full["name"] == "full-64" and "lsh" not in full
    assert lsh["name"] == "lsh2-160" and lsh["lsh"]["num_buckets"] == 20


@pytest.mark.large
def test_a_candidate_is_fitted_without_reading_the_test_split(tiny_task):
    settings = LongDocumentSettings(sequence_length=32, recipe=long_document_recipe(epochs=1, batch_size=6))
    classifier, row = fit_long_document_candidate(
        _TestSplitWatch(carve_out_task(tiny_task, 1), [], refuse=True), settings, verbose=0)
    assert row["status"] == "fitted" and "accuracy" not in row and "test_passages" not in row
    # The warm start's probe is epoch 0: the carve-out accuracy of what is kept.
    assert row["carve_out_accuracy"] == max(row["validation_accuracy"] + [row["head_warm_start_val_accuracy"]])
    assert row["carve_out_passages"] == 12 and classifier is not None


@pytest.mark.large
def test_a_row_over_its_time_budget_stops_and_records_the_projection(tiny_task):
    # No head warm start: it runs before the first step and has no part in
    # the budget (a third of the test's time went to it).
    recipe = long_document_recipe(epochs=3, batch_size=4, head_warm_start=False)
    settings = LongDocumentSettings(sequence_length=64, recipe=recipe, max_hours=1e-7)
    row = run_long_document_row(tiny_task, settings, verbose=0)
    assert row["status"] == "over_time_budget" and "accuracy" not in row
    assert row["step_seconds"]["steps"] == PROBE_STEPS
    assert row["projected_hours"] == pytest.approx(row["step_seconds"]["median"] * 15 / 3600, rel=0.01, abs=0.01)
