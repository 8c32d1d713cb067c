"""Training that stops at a checkpoint before a wall-time budget runs out.

A lent accelerator comes for minutes at a time: a run must leave a
checkpoint, a preset and its curve before the machine goes back, and the
next run continues from them. `TimeBudget` ends `fit` at the end of the
checkpoint interval (a Keras epoch in `resumable_fit`) after which another
interval would not fit in what is left, keeping `reserve_seconds` for what
follows training (held-out evaluation, writing the preset).
"""

import time

import keras

from keras_albert.utils.validation import check_finite_number


class TimeBudget(keras.callbacks.Callback):
    """Stops training at an epoch end when the next epoch would not fit.

    Args:
        budget_seconds: float > 0, wall time allowed from `start` (default:
            when the callback is made) to the end of training.
        reserve_seconds: float >= 0, kept free for the work after `fit`;
            where `fit` validates, at most what one validation pass took
            plus `margin_seconds` (the held-out evaluation after training
            is the same pass: on a GPU it takes seconds, where a fixed
            reserve sized for a CPU left a minute of a 5-minute run idle).
        margin_seconds: float >= 0, added to the measured validation pass
            for writing the preset and the curve.
        start: a `clock()` reading the budget counts from (the start of
            the command, so data preparation counts too).
        clock: a function returning seconds, `time.monotonic` by default;
            tests pass a simulated clock so the decision does not depend on
            how loaded the machine is.

    After `fit`, `stopped_early` says whether the budget ended it.
    """

    def __init__(self, budget_seconds, reserve_seconds=0.0, start=None, margin_seconds=20.0, clock=time.monotonic):
        super().__init__()
        check_finite_number("budget_seconds", budget_seconds, strictly_greater=True)
        check_finite_number("reserve_seconds", reserve_seconds)
        check_finite_number("margin_seconds", margin_seconds)
        self.budget_seconds = float(budget_seconds)
        self.reserve_seconds = float(reserve_seconds)
        self.margin_seconds = float(margin_seconds)
        self.clock = clock
        self.start = clock() if start is None else start
        self.stopped_early = False
        self._epoch_seconds = []
        self._validation_seconds = None

    def reserve(self):
        """Seconds kept for after `fit`: `reserve_seconds`, or less once a
        validation pass has shown what the final evaluation costs."""
        if self._validation_seconds is None:
            return self.reserve_seconds
        return min(self.reserve_seconds, self._validation_seconds + self.margin_seconds)

    def remaining(self):
        return self.budget_seconds - self.reserve() - (self.clock() - self.start)

    def on_test_begin(self, logs=None):
        self._test_start = self.clock()

    def on_test_end(self, logs=None):
        self._validation_seconds = self.clock() - self._test_start

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self.clock()

    def on_epoch_end(self, epoch, logs=None):
        self._epoch_seconds.append(self.clock() - self._epoch_start)
        # The first epoch also compiled; later ones show the steady pace.
        recent = self._epoch_seconds[1:] or self._epoch_seconds
        if max(recent[-3:]) > self.remaining():
            self.stopped_early = True
            self.model.stop_training = True
