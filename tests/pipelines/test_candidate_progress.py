"""A grid of long-document candidates stopped part-way goes on after the last
fitted candidate, with the best one's weights, and ends as an unbroken run."""

import json
import warnings

import numpy as np
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


class _Model:
    """Stands in for a classifier: its weights are its name."""

    def __init__(self, name):
        self.name = name

    def save_weights(self, path):
        with open(path, "w") as handle:
            handle.write(self.name)


def _grid(rates=tuple(CARVE_OUT_ACCURACY)):
    return [LongDocumentSettings(sequence_length=64, recipe=long_document_recipe(learning_rate=rate))
            for rate in rates]


@pytest.fixture
def fake_fitting(monkeypatch):
    """Fits by lookup, logging each fit; stops before the rate in `stop_at`."""
    log, stop_at = [], set()

    def fit(task, settings, verbose, callbacks=()):
        rate = settings.recipe.learning_rate
        if rate in stop_at:
            stop_at.discard(rate)
            raise _Stop()
        log.append(f"fit {rate:g}")
        return _Model(f"model {rate:g}"), {"carve_out_accuracy": CARVE_OUT_ACCURACY[rate]}

    def restore(task, settings, weights_path):
        log.append(f"restored {settings.recipe.learning_rate:g}")
        return _Model(weights_path.read_text())

    def score(classifier, task, settings):
        log.append(f"scored {classifier.name}")
        return {"accuracy": 0.25, "test_passages": 18}

    monkeypatch.setattr(long_documents, "fit_long_document_candidate", fit)
    monkeypatch.setattr(long_documents, "restored_candidate", restore)
    monkeypatch.setattr(long_documents, "score_long_document_candidate", score)
    return log, stop_at


def test_a_stopped_grid_goes_on_after_the_last_fitted_candidate(tmp_path, fake_fitting):
    log, stop_at = fake_fitting
    grid, progress = _grid(), CandidateProgress(tmp_path / "full-64-seed0")
    stop_at.add(5e-4)
    with pytest.raises(_Stop):
        tune_long_document_row(None, grid, progress=progress)
    assert log == ["fit 0.001", "fit 0.0002"]
    recorded = json.loads((tmp_path / "full-64-seed0" / "progress.json").read_text())
    assert recorded["best"] == 1 and len(recorded["fitted"]) == 2
    assert progress.weights_path.read_text() == "model 0.0002"
    log.clear()
    row = tune_long_document_row(None, grid, progress=progress)
    # The best so far comes back from its weights; only the rest are fitted.
    assert log == ["restored 0.0002", "fit 0.0005", "fit 0.0003", "scored model 0.0002"]
    assert row["chosen_candidate"] == 1 and row["status"] == "done"
    assert [c["carve_out_accuracy"] for c in row["candidates"]] == [0.3, 0.6, 0.5, 0.4]
    progress.clear()
    assert not (tmp_path / "full-64-seed0").exists()


def test_a_better_candidate_replaces_the_kept_weights(tmp_path, fake_fitting):
    log, stop_at = fake_fitting
    grid, progress = _grid((1e-3, 5e-4, 2e-4)), CandidateProgress(tmp_path / "row")
    stop_at.add(2e-4)
    with pytest.raises(_Stop):
        tune_long_document_row(None, grid, progress=progress)
    assert progress.weights_path.read_text() == "model 0.0005"
    row = tune_long_document_row(None, grid, progress=progress)
    assert row["chosen_candidate"] == 2 and log[-1] == "scored model 0.0002"
    assert progress.weights_path.read_text() == "model 0.0002"


def test_progress_of_another_grid_or_without_its_weights_starts_afresh(tmp_path, fake_fitting, capsys):
    log, stop_at = fake_fitting
    progress = CandidateProgress(tmp_path / "row")
    stop_at.add(5e-4)
    with pytest.raises(_Stop):
        tune_long_document_row(None, _grid(), progress=progress)
    log.clear()
    other = _grid((1e-3, 2e-4, 5e-4))
    assert progress.load(other) == ([], None)
    assert "progress of another grid" in capsys.readouterr().out
    progress.weights_path.unlink()
    assert progress.load(_grid()) == ([], None)
    assert "is missing" in capsys.readouterr().out
    tune_long_document_row(None, _grid(), progress=progress)
    assert log[:2] == ["fit 0.001", "fit 0.0002"]


@pytest.mark.large
def test_a_resumed_grid_chooses_and_scores_as_an_unbroken_one(tmp_path, monkeypatch):
    task = long_document_task("albert_tiny_en", 32, max_passages_per_class=3)
    grid = [LongDocumentSettings(sequence_length=32, pooling=pooling,
                                 recipe=long_document_recipe(epochs=1, batch_size=6, learning_rate=1e-3))
            for pooling in ("mean", "cls")]
    unbroken = tune_long_document_row(task, grid, verbose=0)
    fit = long_documents.fit_long_document_candidate
    calls = []

    def stop_before_the_second(task, settings, verbose, callbacks=()):
        calls.append(settings.pooling)
        if len(calls) == 2:
            raise _Stop()
        return fit(task, settings, verbose, callbacks)

    progress = CandidateProgress(tmp_path / "full-32-seed0")
    monkeypatch.setattr(long_documents, "fit_long_document_candidate", stop_before_the_second)
    with pytest.raises(_Stop):
        tune_long_document_row(task, grid, verbose=0, progress=progress)
    monkeypatch.setattr(long_documents, "fit_long_document_candidate", fit)
    # The kept weights give what the first candidate's fitting gives.
    texts = task.texts("validation", 30)[:4]
    refitted, _ = fit(task, grid[0], verbose=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        restored = long_documents.restored_candidate(task, grid[0], progress.weights_path)
    # Restoring for scoring skips the optimizer's state without a warning.
    assert not [w for w in caught if "Skipping variable loading" in str(w.message)]
    np.testing.assert_allclose(restored.predict(texts, verbose=0), refitted.predict(texts, verbose=0),
                               atol=1e-6)
    resumed = tune_long_document_row(task, grid, verbose=0, progress=progress)
    assert calls == ["mean", "cls"]
    for key in ("chosen_candidate", "accuracy", "macro_f1", "carve_out_accuracy"):
        assert resumed[key] == unbroken[key], key
    assert ([c["carve_out_accuracy"] for c in resumed["candidates"]]
            == [c["carve_out_accuracy"] for c in unbroken["candidates"]])
