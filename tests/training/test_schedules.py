"""WarmupLinearDecay against google-research/albert's create_optimizer schedule."""

import json

import keras
import numpy as np
import pytest

from keras_albert.training import WarmupLinearDecay
from keras_albert.training import albert_learning_rate
from keras_albert.training import albert_pretraining_schedule


def _original(step, peak, warmup, total, end=0.0, power=1.0):
    """optimization.create_optimizer: polynomial_decay, then the warmup blend."""
    decayed = (peak - end) * (1 - min(step, total) / total) ** power + end
    if warmup and step < warmup:
        return peak * step / warmup
    return decayed


@pytest.mark.parametrize(
    "peak, warmup, total, end, power",
    [
        (0.00176, 3125, 125000, 0.0, 1.0),
        (1e-3, 10, 100, 0.0, 1.0),
        (1e-3, 0, 50, 1e-5, 1.0),
        (2e-3, 20, 80, 1e-4, 2.0),
    ],
)
def test_matches_the_original_schedule(peak, warmup, total, end, power):
    schedule = WarmupLinearDecay(peak, warmup, total, end_learning_rate=end, power=power)
    steps = sorted(
        {0, 1, warmup // 2, max(warmup - 1, 0), warmup, warmup + 1, total // 2,
         total - 1, total, total + 7, 3 * total}
    )
    got = [float(schedule(step)) for step in steps]
    want = [_original(step, peak, warmup, total, end, power) for step in steps]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)


def test_shape_of_the_curve():
    schedule = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100)
    values = np.array([float(schedule(step)) for step in range(120)])
    assert values[0] == 0.0
    assert np.all(np.diff(values[:10]) > 0)  # Warmup rises linearly.
    np.testing.assert_allclose(np.diff(values[:10]), 1e-4, rtol=1e-5)
    # Decay counts from step 0, as the original: no jump back to the peak.
    np.testing.assert_allclose(values[10], 1e-3 * 0.9, rtol=1e-6)
    assert values.max() <= 1e-3
    assert np.all(np.diff(values[10:101]) < 0)
    assert np.all(values[100:] == 0.0)


def test_after_warmup_equals_keras_polynomial_decay():
    ours = WarmupLinearDecay(3e-3, 5, 40, end_learning_rate=1e-4, power=1.5)
    keras_decay = keras.optimizers.schedules.PolynomialDecay(
        3e-3, 40, end_learning_rate=1e-4, power=1.5
    )
    for step in range(5, 60):
        np.testing.assert_allclose(
            float(ours(step)), float(keras_decay(step)), rtol=1e-5
        )


def test_int64_iterations_under_jit():
    # TensorFlow's optimizers count iterations in int64 inside tf.function
    # (the other backends' steps are checked in tests/backends).
    tf = pytest.importorskip("tensorflow")
    schedule = WarmupLinearDecay(1e-3, 10, 100)
    compiled = tf.function(schedule, jit_compile=True)
    for step in (0, 3, 10, 99, 150):
        got = compiled(tf.constant(step, dtype=tf.int64))
        assert got.dtype == tf.float32
        np.testing.assert_allclose(
            float(got), _original(step, 1e-3, 10, 100), rtol=1e-5, atol=1e-9
        )


def test_config_round_trip():
    schedule = WarmupLinearDecay(0.002, 7, 70, end_learning_rate=1e-5, power=2.0, name="s")
    config = schedule.get_config()
    json.dumps(config)
    restored = keras.optimizers.schedules.deserialize(
        keras.optimizers.schedules.serialize(schedule)
    )
    assert isinstance(restored, WarmupLinearDecay)
    assert restored.get_config() == config
    for step in (0, 5, 7, 40, 70, 100):
        assert float(restored(step)) == float(schedule(step))


def test_albert_learning_rate_scales_with_square_root_of_batch():
    assert albert_learning_rate(4096) == pytest.approx(0.00176)
    assert albert_learning_rate(1024) == pytest.approx(0.00088)
    assert albert_learning_rate(256) == pytest.approx(0.00044)
    scaled = albert_learning_rate(
        64, reference_batch_size=16, reference_learning_rate=1e-3
    )
    assert scaled == pytest.approx(2e-3)


def test_albert_pretraining_schedule_keeps_warmup_proportion():
    full = albert_pretraining_schedule(4096)
    assert (full.peak_learning_rate, full.warmup_steps, full.total_steps) == (
        pytest.approx(0.00176), 3125, 125000,
    )
    short = albert_pretraining_schedule(256, total_steps=10000)
    assert short.warmup_steps == 250
    assert short.peak_learning_rate == pytest.approx(0.00044)
    assert albert_pretraining_schedule(8, total_steps=100, warmup_steps=0).warmup_steps == 0


def _kwargs(**overrides):
    return dict(dict(peak_learning_rate=1e-3, warmup_steps=1, total_steps=2), **overrides)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (_kwargs(peak_learning_rate=-1.0), "peak_learning_rate=-1.0"),
        (_kwargs(peak_learning_rate=float("nan")), "peak_learning_rate=nan"),
        (_kwargs(warmup_steps=-1), "warmup_steps=-1"),
        (_kwargs(warmup_steps=1.5), "warmup_steps=1.5"),
        (_kwargs(total_steps=0), "total_steps=0"),
        (_kwargs(warmup_steps=5), "warmup_steps=5, total_steps=2"),
        (_kwargs(power=0.0), "power=0.0"),
        (_kwargs(end_learning_rate=-0.1), "end_learning_rate=-0.1"),
    ],
)
def test_invalid_arguments_name_argument_and_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WarmupLinearDecay(**kwargs)


def test_helper_validation():
    with pytest.raises(ValueError, match="batch_size=0"):
        albert_learning_rate(0)
    with pytest.raises(ValueError, match="total_steps=0"):
        albert_pretraining_schedule(64, total_steps=0)
