"""A grid of long-document candidates stopped part-way goes on after the last
fitted candidate from its recorded rows and leader's scores alone, and ends
as an unbroken run."""

import json

import pytest

from keras_albert.pipelines import long_documents
from keras_albert.pipelines.candidate_progress import CandidateProgress
from keras_albert.pipelines.long_documents import LongDocumentSettings
from keras_albert.pipelines.long_documents import long_document_recipe
from keras_albert.pipelines.long_documents import long_document_task
from keras_albert.pipelines.long_documents import tune_long_document_row

CARVE_OUT_ACCURACY = {1e-3: 0.3, 2e-4: 0.6, 5e-4: 0.5, 3e-4: 0.4}


class _Stop(Exception):
    pass


def _grid(rates=tuple(CARVE_OUT_ACCURACY)):
    return [LongDocumentSettings(sequence_length=64, recipe=long_document_recipe(learning_rate=rate))
            for rate in rates]


@pytest.fixture
def fake_fitting(monkeypatch):
    """Fits by lookup, logging each fit and score; stops before the rate in `stop_at`."""
    log, stop_at = [], set()

    def fit(task, settings, verbose, callbacks=()):
        rate = settings.recipe.learning_rate
        if rate in stop_at:
            stop_at.discard(rate)
            raise _Stop()
        log.append(f"fit {rate:g}")
        return f"model {rate:g}", {"carve_out_accuracy": CARVE_OUT_ACCURACY[rate]}

    def score(classifier, task, settings):
        log.append(f"scored {classifier}")
        return {"accuracy": settings.recipe.learning_rate, "test_passages": 18}

    monkeypatch.setattr(long_documents, "fit_long_document_candidate", fit)
    monkeypatch.setattr(long_documents, "score_long_document_candidate", score)
    return log, stop_at


def _written(snapshots):
    """A persist function that keeps what a results file would hold."""
    return lambda snapshot: snapshots.append(json.loads(json.dumps(snapshot)))


def test_a_stopped_grid_goes_on_from_its_recorded_rows_alone(fake_fitting):
    log, stop_at = fake_fitting
    grid, snapshots = _grid(), []
    stop_at.add(5e-4)
    with pytest.raises(_Stop):
        tune_long_document_row(None, grid, progress=CandidateProgress(persist=_written(snapshots)))
    # Each leader is scored while it is in memory; a later leader replaces it.
    assert log == ["fit 0.001", "scored model 0.001", "fit 0.0002", "scored model 0.0002"]
    assert len(snapshots) == 2
    assert snapshots[-1]["best"] == 1 and len(snapshots[-1]["fitted"]) == 2
    assert snapshots[-1]["best_test_scores"] == {"accuracy": 2e-4, "test_passages": 18}
    log.clear()
    # A fresh process with only the written record: no weights anywhere.
    row = tune_long_document_row(None, grid, progress=CandidateProgress(snapshots[-1]))
    assert log == ["fit 0.0005", "fit 0.0003"]
    assert row["chosen_candidate"] == 1 and row["status"] == "done" and row["accuracy"] == 2e-4
    assert [c["carve_out_accuracy"] for c in row["candidates"]] == [0.3, 0.6, 0.5, 0.4]
    assert all("accuracy" not in c for c in row["candidates"])


def test_a_resumed_grid_reports_what_an_unbroken_one_does(fake_fitting):
    log, stop_at = fake_fitting
    grid = _grid((1e-3, 5e-4, 2e-4))
    unbroken = tune_long_document_row(None, grid)
    snapshots = []
    stop_at.add(2e-4)
    with pytest.raises(_Stop):
        tune_long_document_row(None, grid, progress=CandidateProgress(persist=_written(snapshots)))
    assert snapshots[-1]["best_test_scores"]["accuracy"] == 5e-4
    resumed = tune_long_document_row(None, grid, progress=CandidateProgress(snapshots[-1]))
    assert resumed == unbroken and resumed["chosen_candidate"] == 2


def test_progress_of_another_grid_or_without_its_leaders_scores_starts_afresh(fake_fitting, capsys):
    log, stop_at = fake_fitting
    snapshots = []
    stop_at.add(5e-4)
    with pytest.raises(_Stop):
        tune_long_document_row(None, _grid(), progress=CandidateProgress(persist=_written(snapshots)))
    recorded = snapshots[-1]
    assert CandidateProgress(recorded).load(_grid((1e-3, 2e-4, 5e-4))) == ([], None, None)
    assert "of another grid" in capsys.readouterr().out
    # A record written by the earlier, weights-based progress has no scores.
    older = {key: value for key, value in recorded.items() if key != "best_test_scores"}
    assert CandidateProgress(older).load(_grid()) == ([], None, None)
    assert "no test scores for its leader" in capsys.readouterr().out
    log.clear()
    tune_long_document_row(None, _grid(), progress=CandidateProgress(older))
    assert log[:2] == ["fit 0.001", "scored model 0.001"]


def test_the_progress_is_a_copy_that_later_changes_do_not_reach(fake_fitting):
    recorded = {"candidates": [], "fitted": [], "best": None, "best_test_scores": None}
    progress = CandidateProgress(recorded)
    recorded["fitted"].append({"carve_out_accuracy": 1.0})
    assert progress.snapshot()["fitted"] == []


@pytest.mark.large
def test_a_resumed_grid_chooses_and_scores_as_an_unbroken_one(monkeypatch):
    task = long_document_task("albert_tiny_en", 32, max_passages_per_class=3)
    # The first candidate, fitted only by the unbroken run, skips the head
    # warm start (a third of a fit's time); the second, fitted by both
    # runs, keeps it, so the resumed fit must match the unbroken one in it too.
    grid = [LongDocumentSettings(sequence_length=32, pooling=pooling, recipe=long_document_recipe(
                epochs=1, batch_size=6, learning_rate=1e-3, head_warm_start=warm_start))
            for pooling, warm_start in (("mean", False), ("cls", True))]
    # The unbroken run's record after its first candidate is what a run
    # stopped before the second would have left (stopping itself is
    # test_a_resumed_grid_reports_what_an_unbroken_one_does's, on fakes).
    snapshots = []
    unbroken = tune_long_document_row(task, grid, verbose=0, progress=CandidateProgress(persist=_written(snapshots)))
    after_first = [snapshot for snapshot in snapshots if len(snapshot["fitted"]) == 1][-1]
    fit = long_documents.fit_long_document_candidate
    calls = []

    def counted(task, settings, verbose, callbacks=()):
        calls.append(settings.pooling)
        return fit(task, settings, verbose, callbacks)

    monkeypatch.setattr(long_documents, "fit_long_document_candidate", counted)
    resumed = tune_long_document_row(task, grid, verbose=0, progress=CandidateProgress(after_first))
    assert calls == ["cls"]
    for key in ("chosen_candidate", "accuracy", "macro_f1", "carve_out_accuracy"):
        assert resumed[key] == unbroken[key], key
    assert ([c["carve_out_accuracy"] for c in resumed["candidates"]]
            == [c["carve_out_accuracy"] for c in unbroken["candidates"]])
