"""A preempted machine's death for subprocess workers: `fit` wrapped so the
process SIGKILLs itself after n training batches (no cleanup, no handlers).
Counts batches: on JAX the model's optimizer step is synced from the
compiled state only at the end of an epoch."""

import os
import signal

import keras


class _KillAfterBatches(keras.callbacks.Callback):
    def __init__(self, batches):
        super().__init__()
        self.left = batches

    def on_train_batch_end(self, batch, logs=None):
        self.left -= 1
        if self.left <= 0:
            os.kill(os.getpid(), signal.SIGKILL)


def killed_after_batches(real_fit, batches):
    """`real_fit` (a `resumable_fit`) that dies after `batches` batches."""

    def fit(*args, callbacks=(), **kwargs):
        return real_fit(*args, callbacks=[*callbacks, _KillAfterBatches(batches)], **kwargs)

    return fit
