"""Which training examples a fine-tuning run holds out for validation."""

import numpy as np


def validation_indices(count, fraction, seed, name="validation_fraction"):
    """Indices `(kept, held)` of `count` examples, at random.

    Both come in the seeded random order, so a caller that batches in the
    order given (keras-hub does for in-memory texts) need not shuffle again;
    sort them to keep the file's order. `fraction` 0 holds none out.
    `name` is the argument the caller's users set, for the error.
    """
    held = int(round(count * fraction))
    if fraction and not 1 <= held < count:
        raise ValueError(
            f"`{name}`={fraction} of {count} training examples leaves no validation "
            f"or no training example; use more examples or {name}=0."
        )
    order = np.random.default_rng(seed).permutation(count)
    return order[held:], order[:held]
