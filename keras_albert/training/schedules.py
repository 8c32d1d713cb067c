"""Learning-rate schedules of the ALBERT pretraining recipe."""

import math

import keras
from keras import ops

from keras_albert.utils.validation import check_finite_number

# ALBERT's pretraining recipe (paper, section 4.1; run_pretraining.py flags).
ALBERT_BATCH_SIZE = 4096
ALBERT_PEAK_LEARNING_RATE = 0.00176
ALBERT_TRAIN_STEPS = 125000
ALBERT_WARMUP_STEPS = 3125




def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(
            f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}"
        )
    return value


@keras.saving.register_keras_serializable(package="keras_albert")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup, then polynomial (by default linear) decay.

    The schedule of google-research/albert's `optimization.create_optimizer`:

    ```
    decayed(step) = (peak - end) * (1 - min(step, total_steps) / total_steps)
                    ** power + end
    lr(step) = peak * step / warmup_steps   if step < warmup_steps
               decayed(step)                otherwise
    ```

    The decay is measured from step 0, not from the end of the warmup, so the
    rate after warmup is `peak * (1 - warmup_steps / total_steps)`, exactly
    as the original. `step` is the optimizer's iteration count before the
    update, so the first step uses a learning rate of 0.

    Args:
        peak_learning_rate: float, the rate the warmup reaches.
        warmup_steps: int >= 0, steps of linear warmup; 0 disables it.
        total_steps: int >= 1, the step at which the rate reaches
            `end_learning_rate`; it stays there afterwards.
        end_learning_rate: float, final rate. Defaults to 0.
        power: float > 0, exponent of the decay; 1.0 (default) is linear.
        name: optional name.

    Example:
    >>> from keras_albert.training import WarmupLinearDecay
    >>> schedule = WarmupLinearDecay(
    ...     peak_learning_rate=1e-3, warmup_steps=10, total_steps=100)
    >>> [round(float(schedule(s)), 6) for s in (0, 5, 10, 55, 100, 200)]
    [0.0, 0.0005, 0.0009, 0.00045, 0.0, 0.0]
    """

    def __init__(
        self,
        peak_learning_rate,
        warmup_steps,
        total_steps,
        end_learning_rate=0.0,
        power=1.0,
        name=None,
    ):
        super().__init__()
        self.peak_learning_rate = check_finite_number(
            "peak_learning_rate", peak_learning_rate
        )
        self.warmup_steps = _check_int("warmup_steps", warmup_steps, 0)
        self.total_steps = _check_int("total_steps", total_steps, 1)
        if warmup_steps > total_steps:
            raise ValueError(
                "`warmup_steps` must not exceed `total_steps`. Received: "
                f"warmup_steps={warmup_steps}, total_steps={total_steps}"
            )
        self.end_learning_rate = check_finite_number("end_learning_rate", end_learning_rate)
        self.power = check_finite_number("power", power, strictly_greater=True)
        self.name = name

    def __call__(self, step):
        step = ops.cast(step, "float32")
        total_steps = float(self.total_steps)
        progress = ops.minimum(step, total_steps) / total_steps
        decayed = (self.peak_learning_rate - self.end_learning_rate) * ops.power(
            1.0 - progress, self.power
        ) + self.end_learning_rate
        if not self.warmup_steps:
            return decayed
        warmup_steps = float(self.warmup_steps)
        warmup = self.peak_learning_rate * step / warmup_steps
        return ops.where(ops.less(step, warmup_steps), warmup, decayed)

    def get_config(self):
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "name": self.name,
        }


def albert_learning_rate(
    batch_size,
    reference_batch_size=ALBERT_BATCH_SIZE,
    reference_learning_rate=ALBERT_PEAK_LEARNING_RATE,
):
    """ALBERT's peak LAMB learning rate, scaled to another batch size.

    ALBERT used 0.00176 at batch 4096. LAMB's authors scale the rate with the
    square root of the batch size (You et al., 2019), which keeps the noise
    of the update roughly constant; this applies that rule:
    `reference_learning_rate * sqrt(batch_size / reference_batch_size)`.

    Args:
        batch_size: int >= 1, the global batch size (over all replicas).
        reference_batch_size: int >= 1, the batch the reference rate is for.
        reference_learning_rate: float, the rate at `reference_batch_size`.

    Returns:
        float, the peak learning rate.

    Example:
    >>> from keras_albert.training import albert_learning_rate
    >>> albert_learning_rate(4096)
    0.00176
    >>> albert_learning_rate(1024)
    0.00088
    """
    _check_int("batch_size", batch_size, 1)
    _check_int("reference_batch_size", reference_batch_size, 1)
    reference_learning_rate = check_finite_number(
        "reference_learning_rate", reference_learning_rate
    )
    return reference_learning_rate * math.sqrt(batch_size / reference_batch_size)


def albert_pretraining_schedule(
    batch_size, total_steps=ALBERT_TRAIN_STEPS, warmup_steps=None
):
    """The ALBERT pretraining schedule for a given batch size and length.

    The peak rate comes from `albert_learning_rate(batch_size)`. Warmup keeps
    ALBERT's proportion of the run, 3125 of 125000 steps (2.5%), unless
    `warmup_steps` is given; the rate then decays linearly to 0 at
    `total_steps`.

    Args:
        batch_size: int >= 1, the global batch size.
        total_steps: int >= 1, training steps. Defaults to ALBERT's 125000.
        warmup_steps: int or None; None means 2.5% of `total_steps`.

    Returns:
        a `WarmupLinearDecay`.

    Example:
    >>> from keras_albert.training import albert_pretraining_schedule
    >>> schedule = albert_pretraining_schedule(4096)
    >>> schedule.peak_learning_rate, schedule.warmup_steps
    (0.00176, 3125)
    """
    _check_int("total_steps", total_steps, 1)
    if warmup_steps is None:
        warmup_steps = round(total_steps * ALBERT_WARMUP_STEPS / ALBERT_TRAIN_STEPS)
    return WarmupLinearDecay(
        peak_learning_rate=albert_learning_rate(batch_size),
        warmup_steps=warmup_steps,
        total_steps=total_steps,
    )
