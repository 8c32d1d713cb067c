"""Which Austen novel is this passage from? A task where context helps.

Each of the six novels is split by chapter into train, validation and test
(about 60 / 15 / 25 % of its text), so no chapter, and no sentence of one,
is in two splits. The split is deterministic: per novel, the chapters are
shuffled with a generator seeded by `seed` and the novel's name, then test
takes chapters until it holds a quarter of the novel's characters,
validation until it holds 15 %, and train the rest. Every novel is in every
split; labels are the novel's index in `AUSTEN_NOVELS`.

Passages are cut from each split's chapters of each novel, read in book
order as one stream of SentencePiece pieces, into consecutive passages of
at most `passage_pieces` pieces that start and end at word boundaries (so
decoding a passage and tokenizing it again gives the same pieces). A
passage may run from one chapter into the next of the same split, never
into another split's. The stream's last, shorter remainder is dropped.

Passages are measured in the pieces of the model's own tokenizer because a
model's context is: a passage of `sequence_length - 2` pieces fills a
sequence of `sequence_length` with [CLS] and [SEP], and a model with a
shorter context sees its first pieces (truncation, the baseline for long
documents). Words or characters would convert to pieces only roughly.

Character and place names give a novel away in a few words: TF-IDF on the
first 1,022 pieces of a passage scores 100 % with them. So by default
every proper noun (a word capitalised in at least 90 % of its uses after a
lower-case word, comma or semicolon, over all six novels) becomes
"someone", and what is left to recognise is vocabulary, topic and style,
which need context: TF-IDF then rises from 34 % at 126 pieces to 60 % at
510 and 79 % at 2,046 (measured with `albert_tiny_en`'s pieces, seed 0).
`mask_names=False` keeps the names.

Persuasion, held out of pretraining, is a class here too: fine-tuning and
evaluating on it is what it is kept for; nothing here feeds pretraining.
"""

import collections
import dataclasses
import functools
import re
import zlib

import numpy as np

from keras_albert.datasets.austen import AUSTEN_NOVELS
from keras_albert.datasets.austen import load_austen_chapters
from keras_albert.utils.validation import check_positive_int

SPLITS = ("train", "validation", "test")
# Filled in this order; train takes what is left (about 60 %).
SPLIT_FRACTIONS = (("test", 0.25), ("validation", 0.15))
# SentencePiece marks the first piece of every word with this character.
WORD_START = "\u2581"
NAME_PLACEHOLDER = "someone"
# A word is a name when at least this share of its mid-sentence uses are
# capitalised ("Emma", "Bath", "Admiral"; not "I").
NAME_CAPITALISED_SHARE = 0.9
_WORD = re.compile(r"\b[A-Za-z]+\b")
# A word after a lower-case word, comma, semicolon or colon: capitalised
# there only if it is a name.
_MID_SENTENCE_WORD = re.compile(r"(?<=[a-z,;:] )[A-Za-z]+")


@functools.lru_cache(maxsize=1)
def proper_nouns():
    """Lower-cased words the six novels use as names (a frozenset).

    Example:
    >>> {"emma", "bath", "darcy"} <= proper_nouns(), "house" in proper_nouns()
    (True, False)
    """
    uses, capitalised = collections.Counter(), collections.Counter()
    for novel in AUSTEN_NOVELS:
        for chapter in load_austen_chapters(novel):
            for paragraph in chapter:
                for word in _MID_SENTENCE_WORD.findall(paragraph):
                    uses[word.lower()] += 1
                    capitalised[word.lower()] += word[0].isupper()
    return frozenset(
        word for word, count in uses.items()
        if capitalised[word] >= NAME_CAPITALISED_SHARE * count and word != "i"
    )


def mask_names(text):
    """`text` with every proper noun replaced by "someone".

    Example:
    >>> mask_names("Emma walked to Highbury with Mr. Knightley.")
    'someone walked to someone with someone. someone.'
    """
    names = proper_nouns()
    return _WORD.sub(
        lambda match: NAME_PLACEHOLDER if match.group(0).lower() in names else match.group(0), text
    )


def _check_novels(novels):
    novels = tuple(novels)
    if not novels or len(set(novels)) != len(novels) or not set(novels) <= set(AUSTEN_NOVELS):
        raise ValueError(
            "`novels` must be distinct names from AUSTEN_NOVELS. Received: "
            f"novels={novels!r}. Accepted: {AUSTEN_NOVELS}."
        )
    if len(novels) < 2:
        raise ValueError(f"`novels` needs at least 2 novels (classes). Received: {novels!r}")
    return novels


def _check_seed(seed):
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an integer >= 0. Received: seed={seed!r}")


def split_chapters(seed=0, novels=AUSTEN_NOVELS):
    """Chapter indices of each novel in each split (see the module docstring).

    Returns:
        {split: {novel: tuple of chapter indices, ascending}}.

    Example:
    >>> splits = split_chapters(seed=0)
    >>> sorted(splits), len(splits["test"])
    (['test', 'train', 'validation'], 6)
    """
    _check_seed(seed)
    return _split_chapters(seed, _check_novels(novels))


@functools.lru_cache(maxsize=None)
def _split_chapters(seed, novels):
    splits = {split: {} for split in SPLITS}
    for novel in novels:
        chapters = load_austen_chapters(novel)
        sizes = np.array([sum(len(p) for p in chapter) for chapter in chapters])
        # The name's CRC, not hash(): stable across processes.
        rng = np.random.default_rng([seed, zlib.crc32(novel.encode())])
        order = list(rng.permutation(len(chapters)))
        for split, fraction in SPLIT_FRACTIONS:
            taken = []
            while order and sizes[taken].sum() < fraction * sizes.sum():
                taken.append(order.pop(0))
            splits[split][novel] = tuple(sorted(int(i) for i in taken))
        splits["train"][novel] = tuple(sorted(int(i) for i in order))
        if not all(splits[split][novel] for split in SPLITS):
            raise ValueError(
                f"{novel!r} has too few chapters ({len(chapters)}) for three splits."
            )
    return splits


def passage_bounds(word_starts, passage_pieces, first=0):
    """(start, end) of consecutive passages of at most `passage_pieces`.

    Args:
        word_starts: bool array, True where a piece begins a word.
        passage_pieces: the longest passage, in pieces.
        first: passages start at the first word start at or after this.

    Example:
    >>> passage_bounds(np.array([1, 0, 1, 1, 0, 0, 1, 0], bool), 3)
    [(0, 3), (3, 6)]
    """
    starts = np.flatnonzero(word_starts)
    total = len(word_starts)
    bounds = []
    at = np.searchsorted(starts, first)
    begin = int(starts[at]) if at < len(starts) else total
    while begin + passage_pieces <= total:
        limit = begin + passage_pieces
        end = total
        if limit < total:
            end = int(starts[np.searchsorted(starts, limit, side="right") - 1])
            if end <= begin:  # one word longer than a passage: cut inside it
                end = limit
        bounds.append((begin, end))
        begin = end
    return bounds


@dataclasses.dataclass(frozen=True)
class Passage:
    token_ids: np.ndarray
    label: int
    # (novel, chapter index) of every chapter the passage reads from.
    chapters: frozenset


class LongDocumentTask:
    """Passages of each split, their labels, and their text at any length.

    Built by `build_long_document_task`; `texts(split, max_pieces)` gives
    the first `max_pieces` pieces of each passage as text (what a model
    with a shorter context, or TF-IDF on the same context, reads).
    """

    def __init__(self, passages, novels, passage_pieces, seed, train_shifts, names_masked, detokenize):
        self.passages = passages
        self.names_masked = names_masked
        self.novels = novels
        self.passage_pieces = passage_pieces
        self.seed = seed
        self.train_shifts = train_shifts
        self._detokenize = detokenize
        self._texts = {}

    @property
    def num_classes(self):
        return len(self.novels)

    def labels(self, split):
        return np.array([p.label for p in self._split(split)], dtype="int32")

    def texts(self, split, max_pieces=None):
        """Each passage of `split` decoded; its first `max_pieces` pieces if set."""
        if max_pieces is not None:
            check_positive_int("max_pieces", max_pieces)
        key = (split, max_pieces)
        if key not in self._texts:
            ids = [p.token_ids[:max_pieces].tolist() for p in self._split(split)]
            self._texts[key] = list(self._detokenize(ids)) if ids else []
        return self._texts[key]

    def counts(self):
        """{split: {novel: passages}}."""
        return {
            split: {novel: int((self.labels(split) == i).sum()) for i, novel in enumerate(self.novels)}
            for split in SPLITS
        }

    def describe(self):
        """What a result file records about the task."""
        return {
            "task": "which Austen novel a passage comes from; split by chapter",
            "novels": list(self.novels),
            "passage_pieces": self.passage_pieces,
            "seed": self.seed,
            "train_shifts": self.train_shifts,
            "names_masked": self.names_masked,
            "split_fractions": dict(SPLIT_FRACTIONS, train=round(1 - sum(f for _, f in SPLIT_FRACTIONS), 2)),
            "passages": self.counts(),
        }

    def _split(self, split):
        if split not in self.passages:
            raise ValueError(f"`split` must be one of {SPLITS}. Received: split={split!r}")
        return self.passages[split]


def build_long_document_task(
    tokenizer,
    passage_pieces,
    seed=0,
    novels=AUSTEN_NOVELS,
    train_shifts=1,
    max_passages_per_class=None,
    names_masked=True,
):
    """The long-document task (see the module docstring).

    Args:
        tokenizer: a SentencePiece tokenizer in keras-hub's API
            (`tokenize(list of str)`, `detokenize(list of id lists)`,
            `get_vocabulary()`), e.g. the preset's `AlbertTokenizer`.
        passage_pieces: int, the longest passage in pieces (use
            `sequence_length - 2` to fill a model's sequence).
        seed: int, picks the chapter split and any subsample.
        novels: the classes (default all six).
        train_shifts: int, cut the training stream this many times, each
            pass shifted by `passage_pieces / train_shifts` pieces: about
            that many times more (overlapping) training passages.
            Validation and test passages never overlap.
        max_passages_per_class: int or None, keep at most this many
            passages of each novel in each split (a seeded sample, in
            order): for quick runs.
        names_masked: bool, replace proper nouns by "someone" (see the
            module docstring).

    Returns:
        A `LongDocumentTask`.
    """
    check_positive_int("passage_pieces", passage_pieces)
    check_positive_int("train_shifts", train_shifts)
    if train_shifts > passage_pieces:
        raise ValueError(
            f"`train_shifts` ({train_shifts}) cannot exceed `passage_pieces` ({passage_pieces})."
        )
    if max_passages_per_class is not None:
        check_positive_int("max_passages_per_class", max_passages_per_class)
    if not isinstance(names_masked, bool):
        raise ValueError(f"`names_masked` must be True or False. Received: names_masked={names_masked!r}")
    novels = _check_novels(novels)
    splits = split_chapters(seed, novels)
    word_start = np.array([piece.startswith(WORD_START) for piece in tokenizer.get_vocabulary()])
    passages = {split: [] for split in SPLITS}
    for label, novel in enumerate(novels):
        chapters = load_austen_chapters(novel)
        for split in SPLITS:
            ids, chapter_of = [], []
            for index in splits[split][novel]:
                paragraphs = list(chapters[index])
                if names_masked:
                    paragraphs = [mask_names(paragraph) for paragraph in paragraphs]
                for paragraph in tokenizer.tokenize(paragraphs):
                    ids.extend(paragraph)
                    chapter_of.extend([index] * len(paragraph))
            ids = np.asarray(ids, dtype="int32")
            chapter_of = np.asarray(chapter_of)
            shifts = train_shifts if split == "train" else 1
            found = []
            for shift in range(shifts):
                first = shift * passage_pieces // shifts
                for start, end in passage_bounds(word_start[ids], passage_pieces, first):
                    found.append(Passage(
                        ids[start:end], label,
                        frozenset((novel, int(c)) for c in np.unique(chapter_of[start:end])),
                    ))
            if not found:
                raise ValueError(
                    f"The {split} chapters of {novel!r} hold {len(ids)} pieces: not one "
                    f"passage of passage_pieces={passage_pieces}. Use shorter passages."
                )
            if max_passages_per_class and len(found) > max_passages_per_class:
                rng = np.random.default_rng([seed, label, SPLITS.index(split)])
                keep = np.sort(rng.choice(len(found), max_passages_per_class, replace=False))
                found = [found[i] for i in keep]
            passages[split].extend(found)
    return LongDocumentTask(
        passages, novels, passage_pieces, seed, train_shifts, names_masked, tokenizer.detokenize
    )
