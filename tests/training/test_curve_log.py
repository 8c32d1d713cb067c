"""CurveLog: one JSON line per epoch; a resumed run's repeated epoch is read once."""

from keras_albert.training.curve_log import CurveLog
from keras_albert.training.curve_log import read_curve


def test_rows_and_resume(tmp_path):
    path = tmp_path / "curve.jsonl"
    log = CurveLog(path, steps_per_epoch=10, tokens_per_step=4)
    log.on_epoch_end(0, {"loss": 2.0})
    log.on_epoch_end(1, {"loss": 1.5})
    # Killed before the checkpoint of epoch 2, the resumed run logs it again.
    log.on_epoch_end(1, {"loss": 1.4})
    with open(path, "a") as file:
        file.write('{"step": 30, "tok')  # cut short by a kill
    rows = read_curve(path)
    assert rows == [
        {"step": 10, "tokens": 40, "loss": 2.0},
        {"step": 20, "tokens": 80, "loss": 1.4},
    ]
