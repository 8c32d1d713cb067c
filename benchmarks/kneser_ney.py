"""NLTK's interpolated Kneser-Ney n-gram model, fast enough to score a novel.

`nltk.lm.KneserNeyInterpolated` finds each continuation count by scanning
every context of the next order (`KneserNey._continuation_counts`): about
0.1 s a token with 200k training tokens, hours for Persuasion's 111k.
`IndexedKneserNey` is NLTK's smoothing with those counts, and each
context's number of distinct followers, read from an index built once
after fitting: the same numbers (tests/examples/test_causal_quality.py
compares every score with NLTK's own on a small text). The model around it
is NLTK's: its `NgramCounter`, its `Vocabulary` and the interpolation
recursion of `InterpolatedLanguageModel.unmasked_score`.

Two changes, where NLTK's model gives no probability (each record says so):

- `uniform_floor`: NLTK's unigram probability is a word's continuation
  count over all of them, zero for a piece never seen after another piece,
  and one such piece makes a held-out perplexity infinite. Here the unigram
  level is discounted like the others and the mass it frees is spread
  uniformly over the vocabulary (as KenLM's lmplz does).
- a context whose continuation total is zero (seen only at the very start
  of the training stream) backs off as an unseen context does in NLTK
  (alpha 0, gamma 1) instead of dividing by zero.
"""

from collections import Counter

from nltk.lm import KneserNeyInterpolated
from nltk.lm import counter as nltk_counter
from nltk.lm.smoothing import KneserNey
from nltk.util import everygrams


class IndexedKneserNey(KneserNey):
    """`nltk.lm.smoothing.KneserNey` with indexed continuation counts.

    Args:
        vocabulary, counter, order, discount: as NLTK's `KneserNey`.
        vocabulary_size: int, the number of pieces the uniform floor spreads
            over (the SentencePiece vocabulary, not NLTK's, which adds
            `<UNK>`).
        uniform_floor: bool, discount the unigram level into a uniform
            distribution (False: NLTK's unigram, zero for unseen pieces).
    """

    def __init__(self, vocabulary, counter, order, discount=0.1, vocabulary_size=None,
                 uniform_floor=True, **kwargs):
        super().__init__(vocabulary, counter, order, discount=discount, **kwargs)
        if uniform_floor and not vocabulary_size:
            raise ValueError("`vocabulary_size` is needed for the uniform floor.")
        self.vocabulary_size = vocabulary_size
        self.uniform_floor = uniform_floor
        self._index = None

    def build_index(self):
        """Continuation counts N1+(. c w), totals N1+(. c .) and distinct
        followers N1+(c .) of every context, in one pass over the counts."""
        continuations, totals, followers = Counter(), Counter(), Counter()
        for order in range(2, self._order + 1):
            for prefix, words in self.counts[order].items():
                seen = [word for word, count in words.items() if count > 0]
                followers[prefix] = len(seen)
                suffix = prefix[1:]
                totals[suffix] += len(seen)
                for word in seen:
                    continuations[suffix, word] += 1
        self._index = (continuations, totals, followers, sum(1 for key in continuations if not key[0]))

    def share_index(self, other):
        """Uses `other`'s index (same counts, another discount)."""
        self._index = other.index

    @property
    def index(self):
        if self._index is None:
            self.build_index()
        return self._index

    def _continuation_counts(self, word, context=()):
        continuations, totals, _, _ = self.index
        return continuations.get((context, word), 0), totals.get(context, 0)

    def unigram_score(self, word):
        count, total = self._continuation_counts(word)
        if not self.uniform_floor:
            return count / total
        seen_types = self.index[3]
        return (max(count - self.discount, 0.0) / total
                + self.discount * seen_types / total / self.vocabulary_size)

    def alpha_gamma(self, word, context):
        # NLTK's formula; N1+(context .) from the index instead of a scan.
        if len(context) + 1 == self._order:
            prefix_counts = self.counts[context]
            count, total = prefix_counts[word], prefix_counts.N()
        else:
            count, total = self._continuation_counts(word, context)
            if total == 0:
                return 0.0, 1.0
        alpha = max(count - self.discount, 0.0) / total
        gamma = self.discount * self.index[2].get(context, 0) / total
        return alpha, gamma


def new_model(order, discount, vocabulary_size, uniform_floor=True, max_ngrams=None):
    """An empty `KneserNeyInterpolated` whose estimator is `IndexedKneserNey`
    over pieces `0 .. vocabulary_size - 1` (ints).

    `max_ngrams`: NLTK's bound on distinct n-grams per counter while
    `add_text` counts (`nltk.lm.counter.MAX_NGRAMS`, 10M in NLTK 3.10, a
    guard against untrusted text); None keeps NLTK's.
    """
    model = KneserNeyInterpolated(order, discount=discount)
    model.max_ngrams = max_ngrams
    model.vocab.update(range(vocabulary_size))
    model.estimator = IndexedKneserNey(
        model.vocab, model.counts, order, discount=discount,
        vocabulary_size=vocabulary_size, uniform_floor=uniform_floor)
    return model


def add_text(model, token_ids, needed=None):
    """Counts the n-grams up to the model's order of one token stream (a
    list of ints, all inside the vocabulary: NLTK's lookup is skipped).

    `needed`: None counts every n-gram; a set from `needed_contexts` counts
    only those that some probability after those contexts reads (KenLM's
    `filter` idea): an n-gram whose context is needed (its followers and
    raw counts) or whose middle is (a continuation count of a needed
    context), and every unigram and bigram. Probabilities after a needed
    context are then exactly those of the whole count, in a fraction of
    the memory. Counts change: call `model.estimator.build_index()`.
    """
    ids = list(token_ids)
    ngrams = everygrams(ids, max_len=model.order) if needed is None else _needed_ngrams(ids, model.order, needed)
    bound = nltk_counter.MAX_NGRAMS
    nltk_counter.MAX_NGRAMS = getattr(model, "max_ngrams", None) or bound
    try:
        model.counts.update([ngrams])
    finally:
        nltk_counter.MAX_NGRAMS = bound
        model.estimator._index = None


def _needed_ngrams(ids, order, needed):
    size = len(ids)
    for start in range(size):
        yield (ids[start],)
        if start + 1 < size:
            yield (ids[start], ids[start + 1])
        for length in range(3, min(order, size - start) + 1):
            gram = tuple(ids[start: start + length])
            if gram[:-1] in needed or gram[1:-1] in needed:
                yield gram


def needed_contexts(contexts, order):
    """Every suffix, up to order - 1 long, of each context (a sequence of
    ids): the contexts NLTK's recursion visits when scoring after them."""
    needed = {()}
    for context in contexts:
        context = tuple(context[max(0, len(context) - order + 1):])
        needed.update(context[start:] for start in range(len(context)))
    return needed


def with_discount(model, discount):
    """The same counts and index under another discount (NLTK checks it)."""
    other = KneserNeyInterpolated(model.order, discount=discount)
    other.vocab, other.counts = model.vocab, model.counts
    other.estimator = IndexedKneserNey(
        model.vocab, model.counts, model.order, discount=discount,
        vocabulary_size=model.estimator.vocabulary_size,
        uniform_floor=model.estimator.uniform_floor)
    other.estimator.share_index(model.estimator)
    return other


def probability(model, word, context):
    """P(word | the last order - 1 ids of context), NLTK's recursion."""
    return model.unmasked_score(word, tuple(context[len(context) - model.order + 1:]) or None)


def most_likely(model, context):
    """The id of greatest probability after `context` (ties: the lowest id).

    Exact without scoring the whole vocabulary: a piece never seen after any
    suffix of the context gets only the unigram term times the gammas, the
    same factor for all, so among those the best unigram wins.
    """
    context = tuple(context[len(context) - model.order + 1:])
    candidates = set()
    for start in range(len(context)):
        suffix = context[start:]
        if suffix in model.counts[len(suffix) + 1]:
            candidates.update(model.counts[len(suffix) + 1][suffix])
    candidates.add(best_unigram(model))
    scored = [(-probability(model, word, context), word) for word in candidates]
    return min(scored)[1]


def best_unigram(model):
    estimator = model.estimator
    if getattr(estimator, "_best_unigram", None) is None:
        continuations = estimator.index[0]
        estimator._best_unigram = min(
            (-count, word) for (context, word), count in continuations.items() if not context)[1]
    return estimator._best_unigram
