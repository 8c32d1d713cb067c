"""WordNet supersenses: synsets, labels, splits.

Runs without TensorFlow; test_tf_data only where it is installed.
"""

import collections

import pytest

from keras_albert import datasets
from keras_albert.datasets import wordnet_supersense


def test_all_synsets_parsed_with_quotes_unescaped():
    synsets = datasets.load_wordnet_synsets()
    assert len(synsets) == 117659
    assert len({s.synset for s in synsets}) == 117659
    whole = next(s for s in synsets if s.synset == "00003553-n")
    assert whole.definition == "an assemblage of parts that is regarded as a single entity"
    assert whole.examples == ("how big is that part compared to the whole?", "the team is a unit")
    assert whole.lemmas == ("whole", "unit")
    assert not any(s.definition.startswith('"') for s in synsets)


def test_label_sets():
    assert len(datasets.supersense_labels()) == 45
    nouns = datasets.supersense_labels("n")
    assert len(nouns) == 26 and all(name.startswith("noun.") for name in nouns)
    assert list(nouns) == sorted(nouns)


def test_split_is_deterministic_disjoint_and_80_10_10():
    ids = {split: [] for split in wordnet_supersense.SPLITS}
    for synset in datasets.load_wordnet_synsets():
        ids[datasets.split_of(synset.synset)].append(synset.synset)
    sizes = {split: len(v) for split, v in ids.items()}
    total = sum(sizes.values())
    assert total == 117659
    assert abs(sizes["train"] / total - 0.8) < 0.01
    assert abs(sizes["validation"] / total - 0.1) < 0.01
    assert abs(sizes["test"] / total - 0.1) < 0.01
    # A hash of the id, not a random draw: fixed values that never change.
    assert datasets.split_of("00001740-n") == datasets.split_of("00001740-n")
    texts, labels = datasets.load_supersense("validation")
    again, labels_again = datasets.load_supersense("validation")
    assert texts == again and labels == labels_again
    assert len(texts) == sizes["validation"]


def test_noun_task_labels_index_the_noun_label_set():
    texts, labels = datasets.load_supersense("train", pos="n")
    names = datasets.supersense_labels("n")
    counts = collections.Counter(names[i] for i in labels)
    assert set(counts) == set(names)
    assert len(texts) == len(labels) > 60000


def test_examples_are_optional():
    plain, _ = datasets.load_supersense("test", pos="v")
    rich, _ = datasets.load_supersense("test", pos="v", include_examples=True)
    assert len(plain) == len(rich)
    assert sum(len(r) > len(p) for p, r in zip(plain, rich)) > len(plain) // 2


def test_tf_data():
    pytest.importorskip("tensorflow", reason="supersense_dataset is a tf.data.Dataset")
    dataset = datasets.supersense_dataset("validation", pos="r")
    text, label = next(iter(dataset))
    assert text.dtype.name == "string" and label.dtype.name == "int32"


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(split="dev"), "split='dev'"),
        (dict(pos="x"), "pos='x'"),
        (dict(include_examples="yes"), "include_examples"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        datasets.load_supersense(**kwargs)


def test_supersense_split_sample_is_the_seeded_sample_every_caller_shares():
    import numpy as np

    train_texts, train_labels = datasets.load_supersense("train", pos="n")
    test_texts, test_labels = datasets.load_supersense("validation", pos="n")
    order = np.random.default_rng(3).permutation(len(train_texts))[:50]
    sample = datasets.supersense_split_sample(50, 20, seed=3)
    assert sample[0] == [train_texts[i] for i in order]
    np.testing.assert_array_equal(sample[1], np.asarray(train_labels)[order])
    held = np.sort(np.random.default_rng(0).permutation(len(test_texts))[:20])
    assert sample[2] == [test_texts[i] for i in held]
    np.testing.assert_array_equal(sample[3], np.asarray(test_labels)[held])
    # The held-out sample does not move with the training seed.
    assert datasets.supersense_split_sample(50, 20, seed=4)[2] == sample[2]
    # The same seed gives the same sample; 0 means everything.
    assert datasets.supersense_split_sample(50, 20, seed=3)[0] == sample[0]
    everything = datasets.supersense_split_sample(0, 0, seed=3)
    assert sorted(everything[0]) == sorted(train_texts) and len(everything[2]) == len(test_texts)
    assert everything[0][:50] == sample[0]
    with pytest.raises(ValueError, match="train_size"):
        datasets.supersense_split_sample(-1)


def test_a_held_out_sample_spans_the_classes():
    """The validation split is ordered by supersense: its first 1,000
    glosses hold 3 of the 26 classes. A sample must not be its head."""
    import numpy as np

    _, _, _, labels = datasets.supersense_split_sample(10, 1000)
    counts = np.bincount(labels, minlength=len(datasets.supersense_labels(pos="n")))
    assert np.count_nonzero(counts) >= 24 and counts.max() < 250, counts


def test_callers_share_supersense_split_sample():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    for path in ("examples/quickstart.py", "benchmarks/transfer_tasks.py",
                 "tests/models/test_bundled_preset_transfer.py"):
        source = (root / path).read_text()
        assert "supersense_split_sample(" in source, path
    for path in ("examples/quickstart.py", "tests/models/test_bundled_preset_transfer.py"):
        assert "permutation(" not in (root / path).read_text(), path


def test_held_out_sample_is_spread_prefix_stable_and_the_split_sample():
    import numpy as np

    texts, labels = datasets.supersense_held_out_sample(1200)
    counts = np.bincount(labels, minlength=len(datasets.supersense_labels(pos="n")))
    assert np.count_nonzero(counts) >= 24 and counts.max() < 300, counts
    # Its first 200 are the sample of 200: int8 agreement's check texts are
    # the exporter's default check texts.
    assert datasets.supersense_held_out_sample(200)[0] == texts[:200]
    # The same glosses as the split sample, which keeps the file's order.
    assert sorted(datasets.supersense_split_sample(0, 1200)[2]) == sorted(texts)
    validation = set(datasets.load_supersense("validation", pos="n")[0])
    assert set(texts) <= validation
    for count in (0, 10**6, 2.5, True):
        with pytest.raises(ValueError, match=f"count={count!r}"):
            datasets.supersense_held_out_sample(count)


def test_split_sample_scores_on_the_test_split_on_request():
    _, _, test_texts, test_labels = datasets.supersense_split_sample(10, 0, held_out="test")
    texts, labels = datasets.load_supersense("test", pos="n")
    assert test_texts == texts and test_labels.tolist() == labels
    with pytest.raises(ValueError, match=r"held_out='train'"):
        datasets.supersense_split_sample(10, 0, held_out="train")
