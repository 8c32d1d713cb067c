"""ALBERT's n-gram masks redrawn for every batch, in NumPy (no TensorFlow).

The NumPy twin of `ngram_masking.mask_ngrams_tf`, for the batches
`PretrainingBatches` makes on JAX and PyTorch: the stored masks are undone,
words are found from `token_boundary`, and masks are drawn again with
Google's greedy n-gram selection (1/n length weights, whole words, 80/10/10
replacement), vectorised over the batch so a 128 x 128 batch costs about a
millisecond. Given the same random draws it gives the TensorFlow masker's
output exactly (tests check it); the draws come from a NumPy `Generator`,
which `PretrainingBatches` seeds with (run seed, batch index) so a resumed
run masks every batch as an uninterrupted run would.
"""

import numpy as np

from keras_albert.data.ngram_masking import CLS_ID
from keras_albert.data.ngram_masking import MASK_ID
from keras_albert.data.ngram_masking import SEP_ID
from keras_albert.data.ngram_masking import ngram_probabilities
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int

MASKING_FEATURES = (
    "input_ids",
    "input_mask",
    "token_boundary",
    "masked_lm_positions",
    "masked_lm_ids",
    "masked_lm_weights",
)


class DynamicMasking:
    """Re-masks NumPy pretraining batches with fresh n-gram masks.

    Args:
        vocabulary_size: int, random replacements are drawn from
            `[0, vocabulary_size)`, as in the original.
        masked_lm_prob: float in (0, 1], share of tokens to predict.
        max_ngram: int, the longest masked span in words.
        favor_shorter_ngram: bool, n-gram weights 1/n (True) or reversed.
        whole_word_masking: bool, mask whole words or single pieces.

    Example:
    >>> features = {"input_ids": np.array([[2, 9, 9, 3]]),
    ...     "input_mask": np.ones((1, 4), "int32"),
    ...     "token_boundary": np.ones((1, 4), "int32"),
    ...     "masked_lm_positions": np.zeros((1, 2), "int32"),
    ...     "masked_lm_ids": np.zeros((1, 2), "int32"),
    ...     "masked_lm_weights": np.zeros((1, 2), "float32")}
    >>> masking = DynamicMasking(vocabulary_size=10)
    >>> out = masking(features, np.random.default_rng(0))
    >>> int(out["masked_lm_weights"].sum())
    1
    """

    def __init__(
        self,
        vocabulary_size,
        masked_lm_prob=0.15,
        max_ngram=3,
        favor_shorter_ngram=True,
        whole_word_masking=True,
    ):
        check_positive_int("vocabulary_size", vocabulary_size)
        check_fraction("masked_lm_prob", masked_lm_prob)
        if masked_lm_prob == 0:
            raise ValueError(
                "`masked_lm_prob` must be > 0 for dynamic masking. "
                f"Received: masked_lm_prob={masked_lm_prob!r}"
            )
        self.vocabulary_size = vocabulary_size
        self.masked_lm_prob = float(masked_lm_prob)
        self.max_ngram = max_ngram
        self.whole_word_masking = bool(whole_word_masking)
        self._cdf = np.cumsum(ngram_probabilities(max_ngram, favor_shorter_ngram))
        self._cdf[-1] = 1.0

    def __call__(self, features, rng):
        """Returns a new feature dict with `input_ids` and the `masked_lm_*`
        features redrawn from `rng` (a `np.random.Generator`)."""
        missing = [name for name in MASKING_FEATURES if name not in features]
        if missing:
            raise ValueError(f"`features` must hold {MASKING_FEATURES}. Missing: {missing}")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(
                "`rng` must be a numpy.random.Generator. Received: "
                f"rng={rng!r} of type {type(rng).__name__}"
            )
        original = restore_original_ids(features)
        words = find_words(original, features, self.whole_word_masking)
        batch_size, sequence_length = original.shape
        predictions = features["masked_lm_positions"].shape[1]
        # The same draws as `mask_ngrams_tf`: a uniform order of the real
        # words (padding words sort last), a length per visit, replacements.
        keys = rng.random((batch_size, sequence_length))
        valid_word = np.arange(sequence_length)[None, :] < words["num_words"][:, None]
        order = np.argsort(np.where(valid_word, keys, 2.0), axis=1, kind="stable")
        # n = 1 + how many of the cumulative weights a uniform draw passes.
        draws = rng.random((batch_size, sequence_length))
        sizes = sum((draws >= c for c in self._cdf[:-1]), np.ones_like(order))
        replace_draws = rng.random((2, batch_size, predictions))
        random_ids = rng.integers(0, self.vocabulary_size, (batch_size, predictions), dtype=np.int32)
        return apply_masks(
            features, original, words, self.masked_lm_prob, self.max_ngram,
            order, sizes, replace_draws, random_ids,
        )


def restore_original_ids(features):
    """Undoes stored masks: writes `masked_lm_ids` back at their positions."""
    ids = np.array(features["input_ids"], np.int32)
    rows, slots = np.nonzero(np.asarray(features["masked_lm_weights"]) > 0)
    ids[rows, np.asarray(features["masked_lm_positions"])[rows, slots]] = np.asarray(
        features["masked_lm_ids"]
    )[rows, slots]
    return ids


def find_words(ids, features, whole_word_masking):
    """Candidates and words of a batch, as `ngram_masking.find_words_tf`.

    `offsets[b, w]` is where word `w` starts among row `b`'s candidate
    pieces (`num_candidates` past the last word), `word_of_position` the
    word each position belongs to.
    """
    sequence_length = ids.shape[1]
    mask = np.asarray(features["input_mask"]) > 0
    candidates = mask & (ids != CLS_ID) & (ids != SEP_ID)
    candidate_rank = np.cumsum(candidates, axis=1, dtype=np.int32) - 1
    if whole_word_masking:
        # The first candidate always starts a word, as in the original.
        first = candidates & (candidate_rank == 0)
        starts = candidates & ((np.asarray(features["token_boundary"]) > 0) | first)
    else:
        starts = candidates
    positions = np.arange(sequence_length)[None, :]
    num_candidates = candidates.sum(axis=1, dtype=np.int32)
    num_words = starts.sum(axis=1, dtype=np.int32)
    start_positions = np.argsort(
        np.where(starts, positions, sequence_length + positions), axis=1, kind="stable"
    )
    offsets = np.take_along_axis(candidate_rank, start_positions, axis=1)
    offsets = np.where(positions < num_words[:, None], offsets, num_candidates[:, None])
    offsets = np.concatenate([offsets, num_candidates[:, None]], axis=1)
    word_of_position = np.maximum(np.cumsum(starts, axis=1, dtype=np.int32) - 1, 0)
    return {
        "candidates": candidates,
        "num_words": num_words,
        "offsets": offsets,
        "word_of_position": word_of_position,
        "num_tokens": mask.sum(axis=1),
    }


def apply_masks(
    features,
    original,
    words,
    masked_lm_prob,
    max_ngram,
    order,
    ngram_sizes,
    replace_draws,
    random_ids,
):
    """Masks a batch with given random draws (as `ngram_masking.apply_masks_tf`)."""
    batch_size, sequence_length = original.shape
    predictions = features["masked_lm_positions"].shape[1]
    offsets, num_words = words["offsets"], words["num_words"]
    # np.round is half-to-even, as Python's round() in Google's code.
    budget = np.round(words["num_tokens"].astype(np.float64) * masked_lm_prob).astype(np.int32)
    budget = np.minimum(predictions, np.maximum(1, budget))
    rows = np.arange(batch_size)
    # Everything that does not depend on earlier visits, for all visits at
    # once: each visit's n-gram lengths (longest first), their ends in words
    # and their sizes in pieces. The loop then only runs the greedy part.
    lengths = ngram_sizes[:, :, None] - np.arange(max_ngram)
    first_word = order[:, :, None]
    ends = np.minimum(np.maximum(first_word + lengths, first_word), num_words[:, None, None])
    starts = np.take_along_axis(offsets, order, axis=1)[:, :, None]
    needs = np.take_along_axis(offsets, ends.reshape(batch_size, -1), axis=1)
    needs = needs.reshape(ends.shape) - starts
    # A span covers at most max_ngram words: those are checked for overlap.
    span_words = np.minimum(first_word + np.arange(max_ngram), sequence_length)
    span_rows = np.broadcast_to(rows[:, None], (batch_size, max_ngram))
    covered = np.zeros((batch_size, sequence_length + 1), bool)
    count = np.zeros(batch_size, np.int32)
    possible = lengths >= 1
    for step in range(sequence_length):
        left = budget - count
        active = (step < num_words) & (left > 0)
        if not active.any():
            break
        need = needs[:, step]
        fits = possible[:, step] & (need <= left[:, None])
        # The longest n-gram that fits the budget wins.
        pick = fits.argmax(axis=1)
        words_here = span_words[:, step]
        in_span = words_here < ends[:, step][rows, pick][:, None]
        overlaps = (in_span & covered[span_rows, words_here]).any(axis=1)
        accept = active & fits[rows, pick] & ~overlaps
        chosen = in_span & accept[:, None]
        covered[span_rows[chosen], words_here[chosen]] = True
        count += accept * need[rows, pick]
    masked = words["candidates"] & np.take_along_axis(covered, words["word_of_position"], axis=1)
    # Masked positions in order first, then the rest; padded with 0.
    first = np.argsort(~masked, axis=1, kind="stable")[:, :predictions].astype(np.int32)
    real = np.take_along_axis(masked, first, axis=1)
    positions = np.where(real, first, 0).astype(np.int32)
    labels = np.take_along_axis(original, positions, axis=1)
    replacement = np.where(
        replace_draws[0] < 0.8,
        MASK_ID,
        np.where(replace_draws[1] < 0.5, labels, random_ids),
    )
    replacement = np.where(real, replacement, labels).astype(np.int32)
    input_ids = original.copy()
    # Padded slots point at position 0 and write back its own id.
    input_ids[rows[:, None], positions] = replacement
    outputs = dict(features)
    outputs["input_ids"] = input_ids
    outputs["masked_lm_positions"] = positions
    outputs["masked_lm_ids"] = np.where(real, labels, 0).astype(np.int32)
    outputs["masked_lm_weights"] = real.astype(np.float32)
    return outputs
