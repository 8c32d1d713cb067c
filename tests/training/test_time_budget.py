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
