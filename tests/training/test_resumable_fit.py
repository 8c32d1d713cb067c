"""resumable_fit: a resumed run ends with the weights of an uninterrupted one.

On every backend: TensorFlow's runs take a tf.data stream (its
`tf.train.Checkpoint` path), the others a seeded generator (the NumPy
checkpoints of `array_checkpoints`):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/training/test_resumable_fit.py
"""

import keras
import numpy as np
import pytest

from keras_albert.training.resumable_fit import resumable_fit


def _model():
    keras.utils.set_random_seed(4)
    model = keras.Sequential(
        [keras.Input((6,)), keras.layers.Dense(8), keras.layers.Dropout(0.3),
         keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", jit_compile=True)
    return model


def _stream(skip_batches):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6)).astype("float32")
    y = rng.normal(size=(40, 1)).astype("float32")
    # Every batch differs, so training on the wrong ones shows in the weights.
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        return (
            tf.data.Dataset.from_tensor_slices((x, y))
            .shuffle(40, seed=1)
            .repeat()
            .batch(4)
            .skip(skip_batches)
        )
    return _numpy_stream(x, y, skip_batches)


def _numpy_stream(x, y, skip_batches, batch_size=4):
    """Batches of a new seeded order each pass, the first `skip_batches` left out."""
    per_pass = len(x) // batch_size
    index = skip_batches
    while True:
        order = np.random.default_rng(index // per_pass).permutation(len(x))
        rows = order[(index % per_pass) * batch_size:][:batch_size]
        yield x[rows], y[rows]
        index += 1


def _weights(model):
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


@pytest.mark.large
def test_resumed_run_equals_uninterrupted_run(tmp_path):
    straight = _model()
    resumable_fit(straight, _stream, 12, tmp_path / "straight", 3, verbose=0)

    first = _model()
    resumable_fit(first, _stream, 6, tmp_path / "resumed", 3, verbose=0)
    second = _model()  # a fresh process would start from fresh weights too
    _, start = resumable_fit(second, _stream, 12, tmp_path / "resumed", 3, verbose=0)

    assert start == 6
    assert int(keras.ops.convert_to_numpy(second.optimizer.iterations)) == 12
    for a, b in zip(_weights(straight), _weights(second)):
        np.testing.assert_array_equal(a, b)


def test_replaying_the_data_would_differ(tmp_path):
    """The check above can fail: resuming without skipping changes weights."""
    straight = _model()
    resumable_fit(straight, _stream, 12, tmp_path / "straight", 3, verbose=0)
    first = _model()
    resumable_fit(first, _stream, 6, tmp_path / "replayed", 3, verbose=0)
    second = _model()
    resumable_fit(second, lambda skip: _stream(0), 12, tmp_path / "replayed", 3, verbose=0)
    differences = [np.abs(a - b).max() for a, b in zip(_weights(straight), _weights(second))]
    assert max(differences) > 1e-4


def test_finished_run_is_not_trained_again(tmp_path):
    model = _model()
    resumable_fit(model, _stream, 3, tmp_path, 3, verbose=0)
    again = _model()
    history, start = resumable_fit(again, _stream, 3, tmp_path, 3, verbose=0)
    assert history is None and start == 3


def test_checkpoint_every_must_divide_total_steps(tmp_path):
    with pytest.raises(ValueError, match="checkpoint_every"):
        resumable_fit(_model(), _stream, 10, tmp_path, 3)


def test_resuming_with_another_interval_is_refused(tmp_path):
    resumable_fit(_model(), _stream, 3, tmp_path, 3, verbose=0)
    with pytest.raises(ValueError, match="step 3.*divides both 3 and total_steps=12, such as 3"):
        resumable_fit(_model(), _stream, 12, tmp_path, 2, verbose=0)
    # The interval suggested resumes the run.
    history, first_step = resumable_fit(_model(), _stream, 12, tmp_path, 3, verbose=0)
    assert first_step == 3 and len(history.history["loss"]) == 3


def test_uncompiled_model_is_refused(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="Compile"):
        resumable_fit(model, _stream, 3, tmp_path, 3)
