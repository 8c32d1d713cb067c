"""Keras's progress bar for runs whose Keras epochs are checkpoint intervals.

`resumable_fit` runs one Keras epoch per checkpoint interval, so Keras's
"Epoch 3/10" counted intervals, not passes over the data, and said nothing
of the run as a whole. `IntervalProgress` heads each interval with the
steps it covers and the run's progress and time left instead:

    Steps 2,001-3,000 of 10,000 (checkpoint interval 3/10); run 20 % done, about 6 min left

The time left is measured on this process's intervals (a resumed run
starts counting again), leaving out the first once there are others: it
includes compiling the step (a tiny model's first interval took 38 s
here, the next under one). The bar below it is Keras's, counting steps.
"""

import time

import keras
from keras.src.utils import io_utils


def _duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class HeadedProgress(keras.callbacks.ProgbarLogger):
    """Keras's `ProgbarLogger` with each epoch opened by `header(epoch)`,
    which ends in the run's time left (`time_left`): measured on this
    process's epochs, leaving out the first (compiling) once there are
    others. `EpochProgress` (fine-tuning) and `IntervalProgress` share it."""

    def __init__(self):
        super().__init__()
        self._started, self._first_epoch, self._second_started = None, None, None

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self._started, self._first_epoch, self._second_started = time.monotonic(), None, None

    def time_left(self, epoch, epochs):
        """", about N left" for a run of `epochs`, once one of this process's is done."""
        if self._first_epoch is None:
            self._first_epoch = epoch
        done = epoch - self._first_epoch
        if done == 1:
            self._second_started = time.monotonic()
        if not done:
            return ""
        since, counted = (self._started, 1) if done == 1 else (self._second_started, done - 1)
        seconds_per_epoch = (time.monotonic() - since) / counted
        return f", about {_duration(seconds_per_epoch * (epochs - epoch))} left"

    def shows_header(self):
        return True

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        if self.verbose and self.shows_header():
            io_utils.print_msg(self.header(epoch))


class IntervalProgress(HeadedProgress):
    """Keras's `ProgbarLogger`, with each epoch headed by the steps it runs
    and the whole run's progress and time left.

    Args:
        total_steps: the run's last optimizer step.
        steps_per_interval: optimizer steps per Keras epoch.
    """

    def __init__(self, total_steps, steps_per_interval):
        super().__init__()
        self.total_steps, self.steps_per_interval = total_steps, steps_per_interval

    def header(self, epoch):
        """The line that opens epoch `epoch` (0-based)."""
        first, last = epoch * self.steps_per_interval + 1, (epoch + 1) * self.steps_per_interval
        intervals = self.total_steps // self.steps_per_interval
        line = (f"Steps {first:,}-{last:,} of {self.total_steps:,} "
                f"(checkpoint interval {epoch + 1}/{intervals}); run {100 * (first - 1) // self.total_steps} % done")
        return line + self.time_left(epoch, intervals)
