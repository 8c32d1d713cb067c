"""Keras's progress bar for fine-tuning, each epoch headed by what it counts
and by the run's time left.

Keras heads an epoch with a bare "Epoch 2/8" and its bar counts batches
without saying so; a user could not tell how long the run would take.
`EpochProgress` heads each epoch instead with

    Epoch 2/8: one pass over the training data, the bar counts batches; run 12 % done, about 3 min left

The time left is measured on this run's epochs, the scoring after each
included, leaving out the first once there are others: it includes
compiling the step (`training/interval_progress.py` does the same for
`pretrain`'s checkpoint intervals).
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


class EpochProgress(keras.callbacks.ProgbarLogger):
    """Keras's `ProgbarLogger`, with each epoch headed by what the bar counts
    and the whole run's progress and time left.

    Args:
        unit: what the bar below the header counts (Keras's steps: batches).
    """

    def __init__(self, unit="batches"):
        super().__init__()
        self.unit = unit
        self._started, self._second_started = None, None

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self._started, self._second_started = time.monotonic(), None

    def header(self, epoch):
        """The line that opens epoch `epoch` (0-based)."""
        line = (f"Epoch {epoch + 1}/{self.epochs}: one pass over the training data, "
                f"the bar counts {self.unit}; run {100 * epoch // self.epochs} % done")
        if epoch == 1:
            self._second_started = time.monotonic()
        if epoch:
            # Past the first epoch (compiling) once there are others.
            since, counted = (self._started, 1) if epoch == 1 else (self._second_started, epoch - 1)
            seconds_per_epoch = (time.monotonic() - since) / counted
            line += f", about {_duration(seconds_per_epoch * (self.epochs - epoch))} left"
        return line

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        # One epoch needs no heading (as in Keras): its bar is the run.
        if self.verbose and self.epochs > 1:
            io_utils.print_msg(self.header(epoch))
