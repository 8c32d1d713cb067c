"""The one fine-tuning loop: the kept epoch (ties to the later one), epoch 0,
patience, the splits' scores in the logs, on the screen and in TensorBoard."""

import re

import keras
import numpy as np
import pytest

from keras_albert.training.best_epoch import KeepBestEpoch
from keras_albert.training.epoch_logging import EpochScores
from keras_albert.training.fine_tuning_loop import fit_keeping_best


def _model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


DATA = {"x": np.random.default_rng(0).normal(size=(16, 3)).astype("float32"),
        "y": np.arange(16) % 2, "batch_size": 8}


class Recorded:
    """A validation score per epoch, read from a list, and the weights
    each epoch ended with."""

    def __init__(self, values):
        self.values, self.weights = list(values), []

    def __call__(self, model):
        self.weights.append([np.array(w) for w in model.get_weights()])
        return {"accuracy": self.values[len(self.weights) - 1]}


def _fit(values, epoch_zero=None, patience=None, **kwargs):
    model, recorded = _model(), Recorded(values)
    before = [np.array(w) for w in model.get_weights()]
    scores = EpochScores([("val_", "validation split", recorded)])
    outcome = fit_keeping_best(model, len(values), monitor="val_accuracy", patience=patience,
                               epoch_zero=epoch_zero, scores=scores, verbose=0, **DATA, **kwargs)
    return model, recorded, before, outcome


def _assert_weights(model, expected):
    for got, want in zip(model.get_weights(), expected):
        np.testing.assert_array_equal(got, want)


def test_a_tie_keeps_the_later_epoch():
    model, recorded, _, outcome = _fit([0.5, 1.0, 1.0, 0.75])
    assert outcome.kept_epoch == 3 and outcome.epochs_run == 4
    _assert_weights(model, recorded.weights[2])


def test_every_epoch_tying_the_warm_start_keeps_the_last():
    # The run: the fitted head and every epoch scored 1.0.
    model, recorded, _, outcome = _fit([1.0, 1.0, 1.0], epoch_zero={"val_accuracy": 1.0})
    assert outcome.kept_epoch == 3
    _assert_weights(model, recorded.weights[-1])


def test_epoch_zero_is_kept_when_no_epoch_reaches_it():
    model, _, before, outcome = _fit([0.5, 0.75], epoch_zero={"val_accuracy": 0.8})
    assert outcome.kept_epoch == 0
    _assert_weights(model, before)


def test_patience_counts_epochs_since_a_strictly_better_score():
    # Ties are kept but are no improvement: epoch 3 is kept, and the run
    # stops two epochs after epoch 1's strict improvement.
    _, _, _, outcome = _fit([0.5, 0.4, 0.5, 0.9, 0.9], patience=2)
    assert outcome.epochs_run == 3 and outcome.kept_epoch == 3
    _, _, _, outcome = _fit([0.5, 0.4, 0.5, 0.9], epoch_zero={"val_accuracy": 0.6}, patience=1)
    assert outcome.epochs_run == 1 and outcome.kept_epoch == 0


def test_without_a_monitor_the_last_epoch_is_kept():
    model = _model()
    outcome = fit_keeping_best(model, 2, verbose=0, **DATA)
    assert outcome.kept_epoch == 2 and outcome.epochs_run == 2
    assert isinstance(outcome.history, keras.callbacks.History)


def test_scores_reach_the_history_and_each_line_names_its_split(capsys):
    model = _model()
    scores = EpochScores([
        ("eval_", "evaluation data (--eval 'dev.tsv')", lambda m: {"accuracy": 0.25, "f1_macro": 0.5}),
        ("val_", "validation split", lambda m: {"accuracy": 0.75}),
    ])
    outcome = fit_keeping_best(model, 2, monitor="val_accuracy", scores=scores, verbose=2, **DATA)
    assert outcome.history.history["eval_f1_macro"] == [0.5, 0.5]
    assert outcome.history.history["val_accuracy"] == [0.75, 0.75]
    printed = capsys.readouterr().out
    assert printed.count("  evaluation data (--eval 'dev.tsv'): accuracy=0.2500, f1_macro=0.5000; "
                         "validation split: accuracy=0.7500") == 2
    # Keras's own line counts this fit's epochs and holds the training loss only.
    assert "Epoch 1/2: one pass over the training data, the bar counts batches; run 0 % done\n" in printed
    assert re.search(r"Epoch 2/2: one pass over the training data, the bar counts batches; "
                     r"run 50 % done, about \d+ s left\n", printed)
    keras_lines = [line for line in printed.splitlines() if " - loss: " in line]
    assert len(keras_lines) == 2 and not any("accuracy" in line for line in keras_lines)


def test_tensorboard_gets_epoch_zero_and_each_split_its_own_run(tmp_path):
    tf = pytest.importorskip("tensorflow")
    model = _model()
    scores = EpochScores([("eval_", "evaluation data", lambda m: {"accuracy": 0.5}),
                          ("val_", "validation split", lambda m: {"accuracy": 0.75})])
    fit_keeping_best(model, 2, monitor="val_accuracy", scores=scores, verbose=0,
                     epoch_zero={"eval_accuracy": 0.25, "val_accuracy": 0.5},
                     tensorboard_dir=tmp_path / "logs", **DATA)

    def steps(run, tag):
        found = {}
        for path in (tmp_path / "logs" / run).glob("events.out.tfevents.*"):
            for event in tf.compat.v1.train.summary_iterator(str(path)):
                for value in event.summary.value:
                    if value.tag == tag:
                        found[event.step] = float(tf.make_ndarray(value.tensor))
        return found

    assert steps("train", "epoch_loss").keys() == {1, 2}
    assert steps("eval", "epoch_accuracy") == {0: 0.25, 1: 0.5, 2: 0.5}
    assert steps("validation", "epoch_accuracy") == {0: 0.5, 1: 0.75, 2: 0.75}


def test_no_tensorboard_dir_writes_no_logs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fit_keeping_best(_model(), 1, verbose=0, **DATA)
    assert not list(tmp_path.iterdir())


def test_keep_best_epoch_is_keras_early_stopping():
    # Callers (and their tests) that look for Keras's EarlyStopping find it.
    assert isinstance(KeepBestEpoch("val_accuracy"), keras.callbacks.EarlyStopping)
