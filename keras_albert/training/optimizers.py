"""The one place pipelines get their optimizer: warmup, linear decay, AdamW
or ALBERT's LAMB.

Every training loop of the package (pretraining, fine-tuning, the
classifier recipe, layer-wise and task distillation) warms the learning
rate up linearly, decays it linearly to zero and steps with AdamW (weight
decay 0.01) or, for pretraining, Google's LAMB; they differ only in the
numbers they pass here.
"""

import keras

from keras_albert.training.lamb import AlbertLamb
from keras_albert.training.schedules import WarmupLinearDecay
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int

OPTIMIZER_NAMES = ("adamw", "lamb")


def warmup_steps_for(total_steps, fraction=0.1, at_least=1):
    """`fraction` of `total_steps` (rounded down), at least `at_least`, at
    most `total_steps`."""
    check_positive_int("total_steps", total_steps)
    check_fraction("fraction", fraction)
    return min(total_steps, max(at_least, int(total_steps * fraction)))


def warmup_decay_optimizer(peak_learning_rate, total_steps, warmup_steps, name="adamw",
                           weight_decay=0.01, global_clipnorm=None):
    """AdamW (or LAMB) on `WarmupLinearDecay(peak, warmup, total)`.

    Args:
        peak_learning_rate: float, the rate at the end of the warmup.
        total_steps: int, steps to decay to zero over.
        warmup_steps: int in [0, total_steps].
        name: "adamw" or "lamb" (ALBERT's, with its own decay and clipping).
        weight_decay: float, AdamW's decoupled weight decay.
        global_clipnorm: float or None, AdamW's gradient clipping.

    Example:
    >>> optimizer = warmup_decay_optimizer(1e-4, 1000, warmup_steps_for(1000))
    >>> type(optimizer).__name__
    'AdamW'
    """
    schedule = WarmupLinearDecay(
        peak_learning_rate=peak_learning_rate, warmup_steps=warmup_steps, total_steps=total_steps
    )
    if name == "lamb":
        return AlbertLamb(learning_rate=schedule)
    if name == "adamw":
        return keras.optimizers.AdamW(
            learning_rate=schedule, weight_decay=weight_decay, global_clipnorm=global_clipnorm
        )
    raise ValueError(f"`optimizer` must be one of {OPTIMIZER_NAMES}. Received: optimizer={name!r}")
