"""WordNet 3.0 glosses labelled with their supersense (lexicographer file).

A real text-classification task that ships with the package: gloss ->
supersense, 45 classes (or the 26 noun classes with `pos="n"`). The split is
fixed by a hash of the synset id, so it is the same on every machine and run.
"""

import collections
import csv
import functools
import io
import zlib

from keras_albert.datasets.bundled_files import read_bundled_text

SPLITS = ("train", "validation", "test")
PARTS_OF_SPEECH = ("n", "v", "a", "s", "r")
# Percent buckets of crc32(synset id) % 100 for each split: 80 / 10 / 10.
_SPLIT_BUCKETS = {"train": range(0, 80), "validation": range(80, 90), "test": range(90, 100)}

Synset = collections.namedtuple(
    "Synset", ["synset", "pos", "supersense", "lemmas", "definition", "examples"]
)


def _split_gloss(gloss):
    """Definition, then the quoted example sentences."""
    parts = [part.strip() for part in gloss.split(";")]
    definition, examples = [], []
    for part in parts:
        if part.startswith('"') and part.endswith('"') and len(part) > 1:
            examples.append(part[1:-1])
        elif examples:
            examples[-1] += "; " + part  # a ';' inside an example
        else:
            definition.append(part)
    return "; ".join(p for p in definition if p), tuple(examples)


@functools.lru_cache(maxsize=1)
def load_wordnet_synsets():
    """Returns every synset as a `Synset` record (117,659 of them)."""
    # CSV-style quoting: a field holding quotes is itself quoted, with "".
    rows = csv.reader(
        io.StringIO(read_bundled_text("wordnet_glosses.tsv.xz")), delimiter="\t"
    )
    header = next(rows)
    if header != ["synset", "pos", "supersense", "lemmas", "gloss"]:
        raise ValueError(f"Unexpected WordNet header: {header}")
    records = []
    for synset, pos, supersense, lemmas, gloss in rows:
        definition, examples = _split_gloss(gloss)
        records.append(
            Synset(synset, pos, supersense, tuple(lemmas.split("; ")), definition, examples)
        )
    return tuple(records)


def split_of(synset_id):
    """The split a synset belongs to, from a stable hash of its id."""
    bucket = zlib.crc32(synset_id.encode("utf-8")) % 100
    return next(name for name, buckets in _SPLIT_BUCKETS.items() if bucket in buckets)


def _check(split=None, pos=None):
    if split is not None and split not in SPLITS:
        raise ValueError(f"Unknown split: split={split!r}. Accepted: {SPLITS}.")
    if pos is not None and pos not in PARTS_OF_SPEECH:
        raise ValueError(
            f"Unknown part of speech: pos={pos!r}. Accepted: {PARTS_OF_SPEECH} "
            "or None for all."
        )


def _selected(pos):
    # Satellite adjectives ("s") share the adjective supersense file.
    wanted = {"a", "s"} if pos in ("a", "s") else {pos}
    return [r for r in load_wordnet_synsets() if pos is None or r.pos in wanted]


@functools.lru_cache(maxsize=None)
def supersense_labels(pos=None):
    """Sorted supersense names: 45 for all, 26 for nouns (`pos="n"`).

    Example:
    >>> len(supersense_labels()), len(supersense_labels("n"))
    (45, 26)
    """
    _check(pos=pos)
    return tuple(sorted({r.supersense for r in _selected(pos)}))


def load_supersense(split="train", pos=None, include_examples=False):
    """Returns `(texts, labels)` for one split of the supersense task.

    Args:
        split: "train", "validation" or "test" (80/10/10 by synset id).
        pos: None for all synsets, or "n", "v", "a"/"s", "r".
        include_examples: append the gloss's example sentences to the
            definition (they often contain the word itself).

    Returns:
        A list of strings and a list of int label ids indexing
        `supersense_labels(pos)`.

    Example:
    >>> texts, labels = load_supersense("validation", pos="n")
    >>> supersense_labels("n")[labels[0]]  # doctest: +SKIP
    'noun.Tops'
    """
    _check(split=split, pos=pos)
    if not isinstance(include_examples, bool):
        raise ValueError(
            "`include_examples` must be a bool. "
            f"Received: include_examples={include_examples!r}"
        )
    index = {name: i for i, name in enumerate(supersense_labels(pos))}
    texts, labels = [], []
    for record in _selected(pos):
        if split_of(record.synset) != split:
            continue
        text = record.definition
        if include_examples and record.examples:
            text = text + "; " + "; ".join(record.examples)
        texts.append(text)
        labels.append(index[record.supersense])
    return texts, labels


def supersense_dataset(split="train", pos=None, include_examples=False):
    """`load_supersense` as a `tf.data.Dataset` of (text, label) pairs."""
    import tensorflow as tf

    texts, labels = load_supersense(split, pos, include_examples)
    return tf.data.Dataset.from_tensor_slices((texts, labels))


HELD_OUT_SAMPLE_SEED = 0


def _held_out_order(count, size):
    # At random, not the first glosses: the split is ordered by supersense,
    # and its first 1,000 noun glosses hold only 3 of the 26. One fixed
    # permutation, so a smaller sample is the start of a larger one.
    import numpy as np

    return np.random.default_rng(HELD_OUT_SAMPLE_SEED).permutation(size)[:count]


def supersense_held_out_sample(count, pos="n"):
    """`count` glosses of the supersense validation split, in a fixed random order.

    The held-out texts for checks that need no training sample (int8
    agreement, say): the supersenses in about their proportions, the same on every run,
    and the first `k` of a sample are the sample of `k`.

    Returns:
        `(texts, labels)`: a list of strings and an integer NumPy array.
    """
    import numpy as np

    texts, labels = load_supersense("validation", pos=pos)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= len(texts):
        raise ValueError(
            f"`count` must be an int in [1, {len(texts)}] (the validation glosses). "
            f"Received: count={count!r}"
        )
    order = _held_out_order(count, len(texts))
    return [texts[i] for i in order], np.asarray(labels)[order]


HELD_OUT_CHOICES = ("validation", "test")


def supersense_split_sample(train_size=0, test_size=0, seed=0, pos="n", held_out="validation"):
    """A seeded sample of the supersense task's training and held-out glosses.

    The data `make demo`, `benchmarks/transfer.py` and the bundled preset's
    regression test share: `train_size` training glosses drawn in a random
    order fixed by `seed` (all of them, shuffled, if 0), and `test_size`
    glosses of the `held_out` split, "validation" or "test" (all if 0),
    which is held out of pretraining and fine-tuning alike; reported
    figures come from "test", which nothing was chosen on. The held-out sample is drawn at
    random, the same whatever `seed` is, so runs with other training seeds
    score on the same glosses.

    Returns:
        `(train_texts, train_labels, test_texts, test_labels)`: lists of
        strings and integer NumPy arrays of label ids indexing
        `supersense_labels(pos)`.
    """
    import numpy as np

    for name, value in (("train_size", train_size), ("test_size", test_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"`{name}` must be an int >= 0 (0: all). Received: {name}={value!r}")
    if held_out not in HELD_OUT_CHOICES:
        raise ValueError(
            f"`held_out` must be one of {HELD_OUT_CHOICES}. Received: held_out={held_out!r}")
    train_texts, train_labels = load_supersense("train", pos=pos)
    test_texts, test_labels = load_supersense(held_out, pos=pos)
    order = np.random.default_rng(seed).permutation(len(train_texts))
    if train_size:
        order = order[:train_size]
    held = np.arange(len(test_texts))
    if test_size:
        held = np.sort(_held_out_order(test_size, len(held)))
    return (
        [train_texts[i] for i in order],
        np.asarray(train_labels)[order],
        [test_texts[i] for i in held],
        np.asarray(test_labels)[held],
    )
