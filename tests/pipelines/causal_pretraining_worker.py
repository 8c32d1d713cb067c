"""`python -m keras_albert ARGS` for the causal-LM pretraining tests:
with BLOCK_TENSORFLOW=1, TensorFlow is unimportable (a machine without
it); with KILL_AT_BATCH=n, the process SIGKILLs itself after n training
batches, the way a preempted machine dies (no cleanup, no handlers)."""

import os
import signal
import sys

if os.environ.get("BLOCK_TENSORFLOW") == "1":
    sys.modules["tensorflow"] = None
    sys.modules["tensorflow_text"] = None

import keras  # noqa: E402

from keras_albert.cli.main import main  # noqa: E402
from keras_albert.pipelines import causal_pretraining  # noqa: E402


class _KillAfterBatches(keras.callbacks.Callback):
    def __init__(self, batches):
        super().__init__()
        self.left = batches

    def on_train_batch_end(self, batch, logs=None):
        self.left -= 1
        if self.left <= 0:
            os.kill(os.getpid(), signal.SIGKILL)


def _with_killer(real_fit, batches):
    def fit(*args, callbacks=(), **kwargs):
        return real_fit(*args, callbacks=[*callbacks, _KillAfterBatches(batches)], **kwargs)

    return fit


if __name__ == "__main__":
    if "KILL_AT_BATCH" in os.environ:
        causal_pretraining.resumable_fit = _with_killer(
            causal_pretraining.resumable_fit, int(os.environ["KILL_AT_BATCH"])
        )
    sys.exit(main(sys.argv[1:]))
