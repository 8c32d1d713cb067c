"""TimeBudget ends fit at the last epoch that fits, checkpoints included."""

import time

import keras
import numpy as np
import pytest

from keras_albert.training.time_budget import TimeBudget


class _SlowEpochs(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        time.sleep(0.3)


def _fit(budget, epochs=20):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        np.zeros((8, 2)), np.zeros((8, 1)), epochs=epochs, verbose=0,
        callbacks=[_SlowEpochs(), budget],
    )
    return len(history.epoch)


def test_stops_before_the_epoch_that_would_not_fit():
    budget = TimeBudget(budget_seconds=2.0, reserve_seconds=0.5)
    epochs = _fit(budget)
    assert budget.stopped_early
    # About 0.3 s an epoch in 1.5 s: stopped well before 20, after 2 or more.
    assert 2 <= epochs <= 5
    assert time.monotonic() - budget.start < 2.0


def test_a_measured_validation_pass_shrinks_the_reserve():
    # A reserve sized for a slow machine (2.5 s of a 4 s budget) would stop
    # after two epochs; validation passes of milliseconds show that the
    # evaluation after training needs only them plus the margin.
    budget = TimeBudget(budget_seconds=4.0, reserve_seconds=2.5, margin_seconds=0.2)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        np.zeros((8, 2)), np.zeros((8, 1)), validation_data=(np.zeros((4, 2)), np.zeros((4, 1))),
        epochs=40, verbose=0, callbacks=[_SlowEpochs(), budget],
    )
    # Stopped by the budget, not the epoch count, with the measured reserve
    # (validation took milliseconds) kept free instead of 2.5 s.
    assert budget.stopped_early and len(history.epoch) < 40
    assert budget.reserve() < 1.0
    # Training ran into the 2.5 s a fixed reserve would have kept idle, and
    # still ended inside the budget. (Ending before budget minus the measured
    # reserve is an estimate from earlier epochs: on a loaded 2-core CI
    # machine one epoch ran 0.1 s over it, so the bound is the budget.)
    elapsed = time.monotonic() - budget.start
    assert 4.0 - 2.5 < elapsed < 4.0


def test_the_reserve_is_kept_whole_without_validation():
    budget = TimeBudget(budget_seconds=60.0, reserve_seconds=30.0)
    _fit(budget, epochs=2)
    assert budget.reserve() == 30.0


def test_runs_to_the_end_with_room_to_spare():
    budget = TimeBudget(budget_seconds=60.0)
    assert _fit(budget, epochs=3) == 3 and not budget.stopped_early


@pytest.mark.parametrize(
    "budget, reserve, name",
    [(0, 0, "budget_seconds"), (-1, 0, "budget_seconds"), (float("nan"), 0, "budget_seconds"), (5, -1, "reserve_seconds")],
)
def test_bad_budgets_are_refused(budget, reserve, name):
    with pytest.raises(ValueError, match=f"`{name}` must be a finite number"):
        TimeBudget(budget, reserve)
