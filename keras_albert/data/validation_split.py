"""Which training examples a fine-tuning run holds out for validation."""

import numpy as np


def validation_indices(count, fraction, seed, name="validation_fraction", labels=None):
    """Indices `(kept, held)` of `count` examples, at random.

    Both come in the seeded random order, so a caller that batches in the
    order given (keras-hub does for in-memory texts) need not shuffle again;
    sort them to keep the file's order. `fraction` 0 holds none out.
    `name` is the argument the caller's users set, for the error.

    With `labels` (one class per example), the carve-out is stratified:
    each class gives `fraction` of its examples, rounded so that the total
    is still `round(count * fraction)`. A small validation split of a
    skewed task then scores every class in its proportion instead of
    whichever classes the draw happened to pick.
    """
    held_count = int(round(count * fraction))
    if fraction and not 1 <= held_count < count:
        raise ValueError(
            f"`{name}`={fraction} of {count} training examples leaves no validation "
            f"or no training example; use more examples or {name}=0."
        )
    rng = np.random.default_rng(seed)
    if labels is None or not held_count:
        order = rng.permutation(count)
        return order[held_count:], order[:held_count]
    labels = np.asarray(labels)
    if labels.shape != (count,):
        raise ValueError(f"`labels` must hold one label per example ({count}). Received shape {labels.shape}")
    classes, class_of = np.unique(labels, return_inverse=True)
    members = [rng.permutation(np.flatnonzero(class_of == c)) for c in range(len(classes))]
    sizes = np.array([len(m) for m in members])
    share = sizes * fraction
    per_class = np.floor(share).astype(int)
    # Largest remainders take the rounding; a class that would be left
    # with no training example comes last, and equal claims go at random.
    keeps_one = (sizes - per_class) > 1
    claims = sorted(range(len(members)), key=lambda c: (keeps_one[c], share[c] - per_class[c], rng.random()),
                    reverse=True)
    for c in claims[:held_count - per_class.sum()]:
        per_class[c] += 1
    held = np.concatenate([m[:n] for m, n in zip(members, per_class)])
    kept = np.concatenate([m[n:] for m, n in zip(members, per_class)])
    return rng.permutation(kept), rng.permutation(held)
