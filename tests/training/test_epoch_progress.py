"""Fine-tuning's progress: each epoch says what its bar counts and the
run's time left, not Keras's bare "Epoch k/K"."""

from keras_albert.training.epoch_progress import EpochProgress


def _progress(epochs):
    progress = EpochProgress()
    progress.set_params({"epochs": epochs, "steps": 10, "verbose": 1})
    progress.on_train_begin()
    return progress


def test_the_time_left_is_measured_on_this_runs_epochs():
    progress = _progress(epochs=8)
    assert progress.header(0) == "Epoch 1/8: one pass over the training data, the bar counts batches; run 0 % done"
    progress._started -= 120  # the first epoch (compiling included) took two minutes
    assert progress.header(1).endswith("run 12 % done, about 14 min left")
    # Past the first epoch, only the later ones count.
    progress._second_started -= 10
    assert progress.header(2).endswith("run 25 % done, about 60 s left")
    progress._second_started -= 3 * 3600
    assert progress.header(3).endswith("run 37 % done, about 7.5 h left")


def test_a_single_epoch_has_no_heading(capsys):
    progress = _progress(epochs=1)
    progress.on_epoch_begin(0)
    assert "Epoch" not in capsys.readouterr().out
    progress = _progress(epochs=2)
    progress.on_epoch_begin(0)
    assert capsys.readouterr().out.startswith("Epoch 1/2: one pass over the training data")
