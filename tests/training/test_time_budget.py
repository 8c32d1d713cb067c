"""TimeBudget ends fit at the last epoch that fits, checkpoints included."""

import time

import keras
import numpy as np
import pytest

from keras_albert.training.time_budget import TimeBudget


class _SimulatedClock(keras.callbacks.Callback):
    """A clock that epochs and validation passes advance by set amounts, so
    what the budget decides does not depend on how loaded the machine is.
    Listed before the budget, it advances before the budget reads it."""

    def __init__(self, epoch_seconds, validation_seconds=0.0, first_epoch_seconds=None):
        super().__init__()
        self.now = 100.0
        self.epoch_seconds = epoch_seconds
        self.validation_seconds = validation_seconds
        self.first_epoch_seconds = first_epoch_seconds

    def __call__(self):
        return self.now

    def on_test_end(self, logs=None):
        self.now += self.validation_seconds

    def on_epoch_end(self, epoch, logs=None):
        if epoch == 0 and self.first_epoch_seconds is not None:
            self.now += self.first_epoch_seconds
        else:
            self.now += self.epoch_seconds


def _fit(budget, clock, epochs=40, validate=False):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    validation = (np.zeros((4, 2)), np.zeros((4, 1))) if validate else None
    history = model.fit(
        np.zeros((8, 2)), np.zeros((8, 1)), validation_data=validation,
        epochs=epochs, verbose=0, callbacks=[clock, budget],
    )
    return len(history.epoch)


def test_stops_before_the_epoch_that_would_not_fit():
    clock = _SimulatedClock(epoch_seconds=0.3)
    budget = TimeBudget(budget_seconds=2.0, reserve_seconds=0.5, clock=clock)
    epochs = _fit(budget, clock)
    assert budget.stopped_early
    # 1.5 s for training at 0.3 s an epoch: five epochs fit, a sixth would not.
    assert epochs == 5
    elapsed = clock.now - budget.start
    assert elapsed <= 2.0 - 0.5 < elapsed + 0.3


def test_the_compiling_first_epoch_does_not_stop_training():
    # The first epoch also compiles (1.5 s). Judged by it, training would stop
    # after the second epoch, with 1.45 s left; the steady 0.1 s pace fits 15.
    clock = _SimulatedClock(epoch_seconds=0.1, first_epoch_seconds=1.5)
    budget = TimeBudget(budget_seconds=3.05, reserve_seconds=0.0, clock=clock)
    epochs = _fit(budget, clock)
    assert budget.stopped_early
    assert epochs == 1 + 15


def test_a_measured_validation_pass_shrinks_the_reserve():
    # A reserve sized for a slow machine (2.5 s of a 4 s budget) would stop
    # after four epochs; validation passes of 0.01 s show that the
    # evaluation after training needs only them plus the margin.
    clock = _SimulatedClock(epoch_seconds=0.3, validation_seconds=0.01)
    budget = TimeBudget(budget_seconds=4.0, reserve_seconds=2.5, margin_seconds=0.5, clock=clock)
    epochs = _fit(budget, clock, validate=True)
    assert budget.stopped_early and epochs < 40
    assert budget.reserve() == pytest.approx(0.01 + 0.5)
    # Training ran into the 2.5 s a fixed reserve would have kept idle, and
    # stopped at the last epoch (0.31 s with its validation) that fits in
    # the budget less the measured reserve: not one early, not one late.
    elapsed = clock.now - budget.start
    assert elapsed > 4.0 - 2.5
    assert elapsed <= 4.0 - budget.reserve() < elapsed + 0.31
    assert epochs == 11


def test_the_real_clock_is_the_default():
    budget = TimeBudget(budget_seconds=60.0)
    assert budget.clock is time.monotonic
    assert 0.0 <= time.monotonic() - budget.start < 1.0


def test_the_reserve_is_kept_whole_without_validation():
    clock = _SimulatedClock(epoch_seconds=0.3)
    budget = TimeBudget(budget_seconds=60.0, reserve_seconds=30.0, clock=clock)
    _fit(budget, clock, epochs=2)
    assert budget.reserve() == 30.0


def test_runs_to_the_end_with_room_to_spare():
    # On the real clock: a few epochs of a tiny model fit in a minute.
    budget = TimeBudget(budget_seconds=60.0)
    assert _fit(budget, _SimulatedClock(epoch_seconds=0.3), epochs=3) == 3 and not budget.stopped_early


@pytest.mark.parametrize(
    "budget, reserve, name",
    [(0, 0, "budget_seconds"), (-1, 0, "budget_seconds"), (float("nan"), 0, "budget_seconds"), (5, -1, "reserve_seconds")],
)
def test_bad_budgets_are_refused(budget, reserve, name):
    with pytest.raises(ValueError, match=f"`{name}` must be a finite number"):
        TimeBudget(budget, reserve)
