"""`python -m keras_albert ARGS` (pretrain, finetune) with TensorFlow unimportable (as on a
machine without it), optionally SIGKILLed after KILL_AT_BATCH training
batches of this process, the way a preempted machine dies.

    KERAS_BACKEND=jax python tests/backends/cli_worker.py pretrain ...
"""

import os
import signal
import sys

sys.modules["tensorflow"] = None
sys.modules["tensorflow_text"] = None

import keras  # noqa: E402

from keras_albert.cli.main import main  # noqa: E402
from keras_albert.pipelines import pretraining as pipeline  # noqa: E402


class _KillAfterBatches(keras.callbacks.Callback):
    # Counts batches: on JAX the model's optimizer step is synced from the
    # compiled state only at the end of an epoch.
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
    if "TIME_BUDGET_RESERVE_SECONDS" in os.environ:
        # A budget of seconds, for the test, instead of a lent machine's minutes.
        pipeline._TIME_BUDGET_RESERVE_SECONDS = float(os.environ["TIME_BUDGET_RESERVE_SECONDS"])
    if "KILL_AT_BATCH" in os.environ:
        pipeline.resumable_fit = _with_killer(pipeline.resumable_fit, int(os.environ["KILL_AT_BATCH"]))
    sys.exit(main(sys.argv[1:]))
