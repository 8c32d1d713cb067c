"""Per-epoch scores on named data splits, in the logs and in TensorBoard.

`EpochScores` scores the model on each split after every epoch (a task's
own metrics: SQuAD F1, macro-F1, ... which Keras's compiled metrics do not
compute), adds them to the epoch's logs under the split's prefix
(`val_accuracy` for the validation split, `eval_accuracy` for the
evaluation data) and prints one line that names each split. Callbacks after
it in the list (best-epoch keeping, TensorBoard, Keras's History) read them.

`EpochTensorBoard` is Keras's TensorBoard numbered by the project's
epochs: step 0 is the model before training (a warm-started head), step k
the k-th epoch; `eval_` logs go to a run of their own beside `train` and
`validation`.
"""

import os

import keras

# Log prefixes of the splits every loop names the same way.
VALIDATION_PREFIX = "val_"
EVALUATION_PREFIX = "eval_"


class EpochScores(keras.callbacks.Callback):
    """Adds `prefix + metric` scores of each split to the epoch's logs.

    Args:
        splits: `(prefix, description, score)` triples; `score(model)`
            returns `{metric: value}` for that split, `description` names
            it in the printed line ("validation split (0.1 of --train)").
        verbose: print the scores after each epoch.
    """

    def __init__(self, splits, verbose=True):
        super().__init__()
        self.splits = list(splits)
        self.verbose = verbose

    def score(self, model=None):
        """The prefixed scores of `model` (default: the one being trained)."""
        model = model or self.model
        logs = {}
        for prefix, _, score in self.splits:
            logs.update({prefix + name: float(value) for name, value in score(model).items()})
        return logs

    def describe(self, logs):
        """One line naming each split and its scores in `logs`."""
        parts = []
        for prefix, description, _ in self.splits:
            scores = ", ".join(f"{name[len(prefix):]}={value:.4f}" for name, value in logs.items()
                               if name.startswith(prefix))
            if scores:
                parts.append(f"{description}: {scores}")
        return "; ".join(parts)

    def on_epoch_end(self, epoch, logs=None):
        scores = self.score()
        if logs is not None:
            logs.update(scores)
        if self.verbose:
            print("  " + self.describe(scores), flush=True)


class EpochTensorBoard(keras.callbacks.TensorBoard):
    """Keras's TensorBoard callback with step k for epoch k and step 0 for
    `epoch_zero` (the logs of the model before training, when given).

    Logs prefixed `eval_` are written to `log_dir/eval` (TensorBoard shows
    them as a run beside `train` and `validation`). It writes with
    `tf.summary`, as Keras's TensorBoard does: it needs TensorFlow.
    """

    def __init__(self, log_dir, epoch_zero=None, **kwargs):
        super().__init__(log_dir=os.fspath(log_dir), write_graph=False, **kwargs)
        self.epoch_zero = epoch_zero
        self._evaluation_writer = None

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if self.epoch_zero:
            self._write(0, dict(self.epoch_zero))

    def on_epoch_end(self, epoch, logs=None):
        self._write(epoch + 1, dict(logs or {}))

    def on_train_end(self, logs=None):
        super().on_train_end(logs)
        if self._evaluation_writer is not None:
            self._evaluation_writer.close()
            self._evaluation_writer = None

    def _write(self, step, logs):
        evaluation = {name[len(EVALUATION_PREFIX):]: value for name, value in logs.items()
                      if name.startswith(EVALUATION_PREFIX)}
        super().on_epoch_end(step, {k: v for k, v in logs.items() if not k.startswith(EVALUATION_PREFIX)})
        if not evaluation:
            return
        if self._evaluation_writer is None:
            self._evaluation_writer = self.summary.create_file_writer(os.path.join(self.log_dir, "eval"))
        with self._evaluation_writer.as_default():
            for name, value in evaluation.items():
                self.summary.scalar(f"epoch_{name}", value, step=step)
        self._evaluation_writer.flush()
