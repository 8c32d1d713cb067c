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

from keras_albert.training.interval_progress import HeadedProgress


class EpochProgress(HeadedProgress):
    """Keras's `ProgbarLogger`, with each epoch headed by what the bar counts
    and the whole run's progress and time left.

    Args:
        unit: what the bar below the header counts (Keras's steps: batches).
    """

    def __init__(self, unit="batches"):
        super().__init__()
        self.unit = unit

    def header(self, epoch):
        """The line that opens epoch `epoch` (0-based)."""
        line = (f"Epoch {epoch + 1}/{self.epochs}: one pass over the training data, "
                f"the bar counts {self.unit}; run {100 * epoch // self.epochs} % done")
        return line + self.time_left(epoch, self.epochs)

    def shows_header(self):
        # One epoch needs no heading (as in Keras): its bar is the run.
        return self.epochs > 1
