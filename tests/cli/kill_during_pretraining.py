"""Runs `python -m keras_albert pretrain ARGS` but SIGKILLs itself mid-run.

The kill comes from a Keras callback at the end of training step
KILL_AT_STEP (after the checkpoint before it was written), the way a
preempted machine dies: no cleanup, no exception handlers. With
KILL_AT_STAGE instead, it comes inside a file operation:
  vocabulary  the vocabulary's staging file written, not yet renamed
  data        the TFRecords' temporary files written, not yet renamed
  preset      the preset's staging directory complete, not yet swapped in
"""

import os
import signal
import sys

import keras

from keras_albert.cli.main import main
from keras_albert.pipelines import pretraining as pretraining_pipeline


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


def _kill(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_at_stage(stage):
    if stage == "vocabulary":
        from keras_albert.utils import atomic_file

        real_replace = os.replace

        def replace(src, dst, *args, **kwargs):
            if str(dst).endswith("vocabulary.spm"):
                _kill()
            return real_replace(src, dst, *args, **kwargs)

        atomic_file.os = type(sys)("os_proxy")
        atomic_file.os.__dict__.update(vars(os))
        atomic_file.os.replace = replace
    elif stage == "data":
        from keras_albert.data import pretraining_tfrecords

        pretraining_tfrecords.tf.io.gfile.rename = _kill
    elif stage == "preset":
        from keras_albert.utils import atomic_directory

        real_marker = atomic_directory._write_marker

        def write_marker(*args):
            real_marker(*args)
            _kill()

        atomic_directory._write_marker = write_marker
    else:
        raise SystemExit(f"unknown KILL_AT_STAGE {stage!r}")


if __name__ == "__main__":
    if "KILL_AT_STAGE" in os.environ:
        _kill_at_stage(os.environ["KILL_AT_STAGE"])
    else:
        pretraining_pipeline.resumable_fit = _with_killer(
            pretraining_pipeline.resumable_fit, int(os.environ["KILL_AT_STEP"])
        )
    sys.exit(main(sys.argv[1:]))
