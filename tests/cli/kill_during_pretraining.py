"""Runs `python -m keras_albert pretrain ARGS` but SIGKILLs itself mid-run.

The kill comes from a Keras callback at the end of training step
KILL_AT_STEP (after the checkpoint before it was written), the way a
preempted machine dies: no cleanup, no exception handlers.
"""

import os
import signal
import sys

import keras

from keras_albert.cli import pretraining_pipeline
from keras_albert.cli.main import main


class _KillAtStep(keras.callbacks.Callback):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) >= self.step:
            os.kill(os.getpid(), signal.SIGKILL)


def _with_killer(real_fit, step):
    def fit(*args, callbacks=(), **kwargs):
        return real_fit(*args, callbacks=[*callbacks, _KillAtStep(step)], **kwargs)

    return fit


if __name__ == "__main__":
    kill_at = int(os.environ["KILL_AT_STEP"])
    pretraining_pipeline.resumable_fit = _with_killer(
        pretraining_pipeline.resumable_fit, kill_at
    )
    sys.exit(main(sys.argv[1:]))
