"""`resumable_fit`'s progress: each checkpoint interval headed by its steps
and the run's time left, not Keras's "Epoch k/K" (which counted intervals)."""

import re

from keras_albert.training.interval_progress import IntervalProgress
from keras_albert.training.resumable_fit import resumable_fit
from tests.training.test_resumable_fit import _model
from tests.training.test_resumable_fit import _stream


def _headers(out):
    return [line for line in out.splitlines() if line.startswith("Steps ") or line.startswith("Epoch ")]


def test_intervals_name_their_steps_and_the_run_time_left(tmp_path, capsys):
    resumable_fit(_model(), _stream, 6, tmp_path, 2, verbose=2)
    headers = _headers(capsys.readouterr().out)
    assert headers[0] == "Steps 1-2 of 6 (checkpoint interval 1/3); run 0 % done"
    # The unit follows the time a loaded machine took (a first interval that
    # compiles for a minute leaves "about 2 min").
    left = r", about \d+(\.\d)? (s|min|h) left"
    assert re.fullmatch(r"Steps 3-4 of 6 \(checkpoint interval 2/3\); run 33 % done" + left, headers[1])
    assert re.fullmatch(r"Steps 5-6 of 6 \(checkpoint interval 3/3\); run 66 % done" + left, headers[2])
    assert len(headers) == 3
    # Resumed: the time left is measured again, from this run's intervals.
    resumable_fit(_model(), _stream, 10, tmp_path, 2, verbose=2)
    headers = _headers(capsys.readouterr().out)
    assert headers[0] == "Steps 7-8 of 10 (checkpoint interval 4/5); run 60 % done"
    assert headers[1].startswith("Steps 9-10 of 10 (checkpoint interval 5/5); run 80 % done, about ")


def test_durations_read_in_the_unit_that_fits():
    progress = IntervalProgress(total_steps=3000, steps_per_interval=1000)
    progress.on_train_begin()
    progress._started -= 600  # one interval took ten minutes
    assert progress.header(0).endswith("run 0 % done")
    assert progress.header(1) == "Steps 1,001-2,000 of 3,000 (checkpoint interval 2/3); run 33 % done, about 20 min left"
    # The first interval (compiling) is left out once a second one is done.
    progress._second_started -= 30
    assert progress.header(2).endswith("run 66 % done, about 30 s left")
