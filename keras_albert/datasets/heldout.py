"""The held-out texts that no pretraining corpus may contain.

What the project evaluates on, in `HELD_OUT_SETS`: Persuasion (the
held-out novel), the WordNet glosses of the supersense validation and
test splits, and the test chapters of the long-document task (split with
`LONG_DOCUMENT_SEED`) of the five other novels. A corpus builder passes its text through
`HeldOutGuard` before writing it: `drop` removes lines that hold a
held-out passage, `check` refuses a corpus that still holds one.

Lines are compared by containment, on normalised words (lowercase,
letters and digits only), so case, punctuation and a surrounding sentence
do not hide a copy: a dictionary sentence that quotes a held-out gloss
inside a longer definition is caught. A line holds held-out text when

- it shares a run of `NGRAM_WORDS` consecutive words with a held-out
  passage (a gloss, one of its clauses or examples, or a sentence);
- it contains a whole held-out gloss, gloss clause or example of
  `MIN_CONTAINED_WORDS` to `NGRAM_WORDS - 1` words; or
- it equals a held-out passage of at least `MIN_WORDS` words.

Short prose sentences are matched only whole: "I do not know what" is in
every novel, while a short gloss ("a genus of bacteria") is itself the
evaluation item. Passages are kept as hashes of their word n-grams in
sets, so a line costs a few set look-ups per word: fast enough for a
corpus of millions of words.
"""

import functools
import re

from keras_albert.datasets.austen import AUSTEN_NOVELS
from keras_albert.datasets.austen import HELD_OUT_NOVEL
from keras_albert.datasets.austen import load_austen_chapters
from keras_albert.datasets.austen import load_austen_documents
from keras_albert.datasets.austen import split_sentences
from keras_albert.datasets.long_documents import split_chapters
from keras_albert.datasets.wordnet_supersense import load_wordnet_synsets
from keras_albert.datasets.wordnet_supersense import split_of
from keras_albert.utils.validation import check_positive_int

HELD_OUT_SPLITS = ("validation", "test")
# The held-out sets, in the order a passage in two of them is counted.
HELD_OUT_SETS = (
    "persuasion",
    "supersense_validation",
    "supersense_test",
    "long_document_test",
)
# Sets whose short passages are evaluation items in themselves (glosses),
# matched by containment; the others (prose) only when a line equals one.
GLOSS_SETS = ("supersense_validation", "supersense_test")
# The long-document task's default seed, the one results are reported on.
LONG_DOCUMENT_SEED = 0
# Eight words in a row are rarely shared by chance (3 of the 5,472
# sentences of Emma's training chapters share such a run with Persuasion),
# while a copied sentence or gloss of that length always is.
NGRAM_WORDS = 8
MIN_CONTAINED_WORDS = 4
# Shorter passages ("a horse", "go away") are not copies of anything.
MIN_WORDS = 4

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalize(text):
    """Lowercase words joined by single spaces: the form texts are compared in."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def _gloss_passages(synset):
    """The definition, each of its `;` clauses, and each example."""
    yield synset.definition
    clauses = synset.definition.split(";")
    if len(clauses) > 1:
        yield from clauses
    yield from synset.examples


@functools.lru_cache(maxsize=1)
def heldout_passages():
    """{held-out set: tuple of its passages (raw text)}, for `HELD_OUT_SETS`."""
    passages = {name: [] for name in HELD_OUT_SETS}
    for synset in load_wordnet_synsets():
        split = split_of(synset.synset)
        if split in HELD_OUT_SPLITS:
            passages[f"supersense_{split}"].extend(_gloss_passages(synset))
    for document in load_austen_documents(names=(HELD_OUT_NOVEL,), exclude=(), sentences=True):
        passages["persuasion"].extend(document)
    test_chapters = split_chapters(seed=LONG_DOCUMENT_SEED)["test"]
    for novel in AUSTEN_NOVELS:
        if novel == HELD_OUT_NOVEL:
            continue  # held out whole, above
        chapters = load_austen_chapters(novel)
        for index in test_chapters[novel]:
            for paragraph in chapters[index]:
                passages["long_document_test"].extend(split_sentences(paragraph))
    return {name: tuple(texts) for name, texts in passages.items()}


def _windows(words, length):
    for start in range(len(words) - length + 1):
        yield hash(tuple(words[start:start + length]))


class HeldOutGuard:
    """Finds held-out text inside corpus lines, by containment.

    See the module docstring for the three rules a line is matched by.

    Args:
        passages: {set name: iterable of str}, the held-out passages;
            default `heldout_passages()` (Persuasion, the supersense
            validation and test glosses, the long-document test chapters).
        contained_sets: the sets whose passages of `min_contained_words`
            to `ngram_words - 1` words are matched when contained whole;
            default `GLOSS_SETS`.
        ngram_words: int, the shortest run of shared words that matches.
        min_contained_words: int, the shortest passage matched by
            containment.

    Example:
    >>> guard = HeldOutGuard(
    ...     {"glosses": ["a feeling of deep sadness"],
    ...      "novel": ["She had been forced into prudence in her youth."]},
    ...     contained_sets=("glosses",))
    >>> guard.match("Grief: A FEELING of deep sadness, over a loss.")
    'glosses'
    >>> guard.match("Anne had been forced into prudence in her youth, and more.")
    'novel'
    >>> guard.drop(["a horse is an animal", "a feeling of deep sadness"])
    ['a horse is an animal']
    """

    def __init__(
        self,
        passages=None,
        contained_sets=GLOSS_SETS,
        ngram_words=NGRAM_WORDS,
        min_contained_words=MIN_CONTAINED_WORDS,
    ):
        check_positive_int("ngram_words", ngram_words)
        check_positive_int("min_contained_words", min_contained_words)
        if min_contained_words > ngram_words:
            raise ValueError(
                "`min_contained_words` must be at most `ngram_words`. Received: "
                f"min_contained_words={min_contained_words}, ngram_words={ngram_words}"
            )
        passages = heldout_passages() if passages is None else passages
        if not isinstance(passages, dict) or not all(
            isinstance(name, str) and not isinstance(texts, str) for name, texts in passages.items()
        ):
            raise ValueError(
                "`passages` must be a dict of {set name: list of strings}. "
                f"Received: passages={str(passages)[:120]}"
            )
        if isinstance(contained_sets, str) or not all(isinstance(name, str) for name in contained_sets):
            raise ValueError(
                "`contained_sets` must be a list of set names. Received: "
                f"contained_sets={contained_sets!r}. The sets here: {tuple(passages)}."
            )
        self.ngram_words = ngram_words
        self.min_contained_words = min_contained_words
        self._ngrams = {}  # hash of an n-gram -> set name
        self._contained = {}  # length -> {hash of a short passage -> set name}
        self._whole = {}  # hash of a whole passage -> set name
        for name, texts in passages.items():
            for text in texts:
                self._add(name, normalize(text).split(), name in contained_sets)
        self.contained_lengths = tuple(sorted(self._contained))

    def _add(self, name, words, contained):
        if len(words) >= MIN_WORDS:
            self._whole.setdefault(hash(tuple(words)), name)
        if len(words) >= self.ngram_words:
            for key in _windows(words, self.ngram_words):
                self._ngrams.setdefault(key, name)
        elif contained and len(words) >= self.min_contained_words:
            self._contained.setdefault(len(words), {}).setdefault(hash(tuple(words)), name)

    def match(self, line):
        """The name of the held-out set `line` holds text of, or None."""
        words = normalize(line).split()
        found = self._whole.get(hash(tuple(words)))
        if found:
            return found
        for key in _windows(words, self.ngram_words):
            if key in self._ngrams:
                return self._ngrams[key]
        for length in self.contained_lengths:
            passages = self._contained[length]
            for key in _windows(words, length):
                if key in passages:
                    return passages[key]
        return None

    def contains(self, line):
        return self.match(line) is not None

    def drop(self, lines):
        """The lines that hold no held-out text, in order."""
        return [line for line in lines if not self.contains(line)]

    def check(self, lines, where="the corpus"):
        """Raises ValueError naming the first line that holds held-out text."""
        for number, line in enumerate(lines, 1):
            found = self.match(line)
            if found:
                raise ValueError(
                    f"{where} line {number} holds held-out evaluation text ({found}): "
                    f"{line[:120]!r}. Held-out text must never be pretrained on; "
                    "drop it with HeldOutGuard.drop."
                )


def find_contained(lines, passages=None, contained_sets=GLOSS_SETS):
    """Held-out passages found whole inside `lines`: a check of a written corpus.

    Independent of `HeldOutGuard`'s hashing: passages are indexed by their
    first `MIN_CONTAINED_WORDS` words and compared as strings. Searched
    for: every passage of `contained_sets` (glosses) of at least
    `MIN_CONTAINED_WORDS` words, and every other passage (sentences) of at
    least `NGRAM_WORDS` words; a corpus the guard has passed holds none.

    Args:
        lines: iterable of str, the corpus lines.
        passages: {set name: iterable of str}; default `heldout_passages()`.
        contained_sets: the sets searched for from `MIN_CONTAINED_WORDS`
            words on.

    Returns:
        {set name: set of the normalised passages found}, for sets with a
        passage found.

    Example:
    >>> find_contained(["So it was a feeling of deep sadness, they said."],
    ...                {"g": ["A feeling of deep sadness"]}, contained_sets=("g",))
    {'g': {'a feeling of deep sadness'}}
    """
    passages = heldout_passages() if passages is None else passages
    if not isinstance(passages, dict):
        raise ValueError(f"`passages` must be a dict of {{set name: list of strings}}. Received: {passages!r:.120}")
    if isinstance(lines, str):
        raise ValueError(f"`lines` must be a list of strings, not one string. Received: lines={lines[:80]!r}")
    key_words = MIN_CONTAINED_WORDS
    index = {}
    for name, texts in passages.items():
        shortest = MIN_CONTAINED_WORDS if name in contained_sets else NGRAM_WORDS
        for text in texts:
            words = normalize(text).split()
            if len(words) >= shortest:
                index.setdefault(tuple(words[:key_words]), []).append((name, " ".join(words), len(words)))
    found = {}
    for line in lines:
        words = normalize(line).split()
        for start in range(len(words) - key_words + 1):
            for name, passage, length in index.get(tuple(words[start:start + key_words]), ()):
                if " ".join(words[start:start + length]) == passage:
                    found.setdefault(name, set()).add(passage)
    return found
