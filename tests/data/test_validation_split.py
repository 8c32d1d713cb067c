"""The held-out part of fine-tuning data: seeded, disjoint, refused when empty."""

import numpy as np
import pytest

from keras_albert.data.validation_split import validation_indices


def test_indices_are_a_seeded_partition_in_random_order():
    kept, held = validation_indices(50, 0.2, seed=1)
    assert len(held) == 10 and len(kept) == 40
    assert sorted(np.concatenate([kept, held]).tolist()) == list(range(50))
    again = validation_indices(50, 0.2, seed=1)
    assert kept.tolist() == again[0].tolist() and held.tolist() == again[1].tolist()
    # Shuffled, not the file's order: callers that batch as given rely on it.
    assert kept.tolist() != sorted(kept.tolist())
    assert validation_indices(50, 0.2, seed=2)[1].tolist() != held.tolist()


def test_no_fraction_holds_nothing_out():
    kept, held = validation_indices(7, 0, seed=0)
    assert len(held) == 0 and sorted(kept.tolist()) == list(range(7))


@pytest.mark.parametrize("count, fraction", [(4, 0.1), (3, 1.0), (0, 0.5)])
def test_an_empty_part_is_refused_naming_the_argument(count, fraction):
    message = f"`--validation_fraction`={fraction} of {count} training examples leaves no validation"
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        validation_indices(count, fraction, seed=0, name="--validation_fraction")
