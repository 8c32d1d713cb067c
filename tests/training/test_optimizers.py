"""The optimizer factory every training loop uses."""

import keras
import pytest

from keras_albert.training.lamb import AlbertLamb
from keras_albert.training.optimizers import warmup_decay_optimizer
from keras_albert.training.optimizers import warmup_steps_for


@pytest.mark.parametrize(
    "total, fraction, expected", [(1000, 0.1, 100), (5, 0.1, 1), (3, 0.0, 1), (10, 1.0, 10)]
)
def test_warmup_steps(total, fraction, expected):
    assert warmup_steps_for(total, fraction) == expected


def test_adamw_on_warmup_then_linear_decay():
    optimizer = warmup_decay_optimizer(1e-3, 100, 10, weight_decay=0.02, global_clipnorm=1.0)
    assert isinstance(optimizer, keras.optimizers.AdamW)
    assert optimizer.weight_decay == 0.02 and optimizer.global_clipnorm == 1.0
    schedule = optimizer._learning_rate
    rates = [float(schedule(step)) for step in (0, 5, 10, 55, 100)]
    # Google's schedule: the linear decay runs from step 0, the warmup
    # replaces its first steps.
    assert rates == pytest.approx([0.0, 5e-4, 9e-4, 4.5e-4, 0.0], abs=1e-8)


def test_lamb_and_refusals():
    assert isinstance(warmup_decay_optimizer(1e-3, 100, 10, name="lamb"), AlbertLamb)
    with pytest.raises(ValueError, match=r"`optimizer` must be one of \('adamw', 'lamb'\). Received: optimizer='sgd'"):
        warmup_decay_optimizer(1e-3, 100, 10, name="sgd")
    with pytest.raises(ValueError, match="total_steps"):
        warmup_steps_for(0)
