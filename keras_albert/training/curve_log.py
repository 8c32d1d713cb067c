"""A training curve kept as JSON lines, one per epoch, safe across resumes."""

import json
import os

import keras


class CurveLog(keras.callbacks.Callback):
    """Appends `{"step", "tokens", <epoch logs>}` to `path` after each epoch.

    `step` counts optimizer steps (`steps_per_epoch` per epoch) and
    `tokens` the padded tokens behind them (`tokens_per_step` each). A run
    that is killed and resumed may log an epoch twice; `read_curve` keeps
    the last row of each step.
    """

    def __init__(self, path, steps_per_epoch, tokens_per_step):
        super().__init__()
        self.path = os.fspath(path)
        self.steps_per_epoch = steps_per_epoch
        self.tokens_per_step = tokens_per_step

    def on_epoch_end(self, epoch, logs=None):
        step = (epoch + 1) * self.steps_per_epoch
        row = {"step": step, "tokens": step * self.tokens_per_step}
        row.update({name: float(value) for name, value in (logs or {}).items()})
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(json.dumps(row) + "\n")
            file.flush()
            os.fsync(file.fileno())


def read_curve(path):
    """The rows of a `CurveLog` file, one per step, in step order."""
    rows = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill
                rows[row["step"]] = row
    return [rows[step] for step in sorted(rows)]
