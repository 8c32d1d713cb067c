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


def test_a_stratified_carve_out_keeps_the_class_proportions():
    labels = np.array(["a"] * 60 + ["b"] * 30 + ["c"] * 10)
    kept, held = validation_indices(100, 0.2, seed=3, labels=labels)
    assert sorted(np.concatenate([kept, held]).tolist()) == list(range(100))
    held_counts = {c: int((labels[held] == c).sum()) for c in "abc"}
    assert held_counts == {"a": 12, "b": 6, "c": 2}
    # Still seeded, still in random order.
    again = validation_indices(100, 0.2, seed=3, labels=labels)
    assert held.tolist() == again[1].tolist() and held.tolist() != sorted(held.tolist())


def test_stratified_rounding_keeps_the_total_and_a_training_example_per_class():
    # 0.1 of each class is 0.5, 0.5, 0.1 and 0.1 examples; the total is
    # round(2.4) = 2 and goes to the classes that keep an example to train on.
    labels = np.array([0] * 5 + [1] * 5 + [2, 3])
    kept, held = validation_indices(12, 0.2, seed=0, labels=labels)
    assert len(held) == 2 and sorted(labels[held].tolist()) == [0, 1]
    assert set(labels[kept].tolist()) == {0, 1, 2, 3}


def test_labels_of_another_length_are_refused():
    with pytest.raises(ValueError, match=r"one label per example \(10\)"):
        validation_indices(10, 0.2, seed=0, labels=[0, 1])
