"""ALBERT's whole-word n-gram masking, in NumPy and as batched TF ops.

Both follow Google's `create_masked_lm_predictions` (google-research/albert):
words are visited in random order, each draws an n-gram length n <= 3 with
probability proportional to 1/n, the span shrinks one word at a time while
it would exceed the prediction budget, spans touching an already masked word
are skipped, and every masked piece becomes `[MASK]` 80% of the time, a
random id 10% and stays itself 10%. `[CLS]` and `[SEP]` are never masked.

The NumPy `NgramMasker` serves instance creation; `mask_ngrams_tf` re-masks
batches inside a `tf.data` pipeline (dynamic masking) from the stored
`token_boundary`, with the same algorithm (tests check both agree exactly
when fed the same random draws).
"""

import typing

import numpy as np

from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int

# The tf.data half of this module needs TensorFlow; the rest runs without.
tf = optional_tensorflow()[0]

# ALBERT's fixed SentencePiece ids (see sentencepiece_training.py).
PAD_ID, CLS_ID, SEP_ID, MASK_ID = 0, 2, 3, 4

# Google's `_is_start_piece_sp`: its punctuation set misses the apostrophe
# (a doubled `\"` in their literal), which is kept here on purpose.
_GOOGLE_PUNCTUATION = frozenset('!"#$%&()*+,-./:;?@[\\]^_`{|}~')
_CONTINUATION_CHARS = _GOOGLE_PUNCTUATION | frozenset("abcdefghijklmnopqrstuvwxyz")


def is_start_piece(piece):
    """Whether a SentencePiece piece starts a word, by Google's rule.

    A piece starts a word if it begins with `▁` or `<`, is a single
    punctuation mark, or holds any character other than ASCII letters and
    punctuation (digits, apostrophes, non-English letters). Everything else
    (e.g. `"ing"`) continues the previous word.

    Example:
    >>> is_start_piece("▁walk"), is_start_piece("ing"), is_start_piece("9")
    (True, False, True)
    """
    if not isinstance(piece, str):
        raise ValueError(
            f"`piece` must be a str. Received: piece={piece!r} of type "
            f"{type(piece).__name__}"
        )
    if piece.startswith(("▁", "<")) or piece in _GOOGLE_PUNCTUATION:
        return True
    return not all(c.lower() in _CONTINUATION_CHARS for c in piece)


def start_piece_table(pieces):
    """Returns a bool array: `table[id]` is `is_start_piece(pieces[id])`.

    Example:
    >>> start_piece_table(["<pad>", "▁the", "s"]).tolist()
    [True, True, False]
    """
    if isinstance(pieces, str) or not hasattr(pieces, "__iter__"):
        raise ValueError(
            "`pieces` must be a sequence of piece strings, one per id. "
            f"Received: pieces={pieces!r:.80}"
        )
    return np.array([is_start_piece(p) for p in pieces], dtype=bool)


def ngram_probabilities(max_ngram=3, favor_shorter_ngram=True):
    """Probabilities of n-gram lengths 1..max_ngram: 1/n, normalised.

    Example:
    >>> (ngram_probabilities(3) * 11).round(6).tolist()
    [6.0, 3.0, 2.0]
    """
    check_positive_int("max_ngram", max_ngram)
    probabilities = 1.0 / np.arange(1, max_ngram + 1)
    probabilities /= probabilities.sum()
    return probabilities if favor_shorter_ngram else probabilities[::-1].copy()


def num_to_predict(num_tokens, masked_lm_prob, max_predictions_per_seq):
    """Google's prediction budget: `min(max, max(1, round(n * prob)))`.

    Python's `round` (half to even) as in the original, on all tokens
    including `[CLS]` and `[SEP]`.

    Example:
    >>> num_to_predict(128, 0.15, 20)
    19
    """
    return min(
        max_predictions_per_seq, max(1, int(round(num_tokens * masked_lm_prob)))
    )


def select_masked_words(word_offsets, order, ngram_sizes, budget):
    """The greedy span selection at the heart of ALBERT's n-gram masking.

    Args:
        word_offsets: ints, length `W + 1`: word `w` holds candidate pieces
            `word_offsets[w]:word_offsets[w + 1]`.
        order: the words in the order they are visited (a permutation).
        ngram_sizes: the n-gram length drawn at each visit, same length.
        budget: int, the most pieces to mask.

    Returns:
        The masked spans, a list of `(first_word, end_word)` in the order
        they were chosen; they never overlap and hold at most `budget`
        pieces together.

    Example:
    >>> select_masked_words([0, 1, 3, 4], [1, 0, 2], [2, 1, 1], budget=3)
    [(1, 3)]
    """
    num_words = len(word_offsets) - 1
    covered = bytearray(num_words)
    spans = []
    count = 0
    for word, size in zip(order, ngram_sizes):
        if count >= budget:
            break
        start = word_offsets[word]
        end = min(word + size, num_words)
        # Shorter n-grams are tried while the span would bust the budget.
        while count + word_offsets[end] - start > budget and end > word + 1:
            end -= 1
        need = word_offsets[end] - start
        if count + need > budget or 1 in covered[word:end]:
            continue
        covered[word:end] = b"\x01" * (end - word)
        spans.append((word, end))
        count += need
    return spans


class NgramMasker:
    """Masks one sequence of ids as ALBERT's `create_masked_lm_predictions`.

    Args:
        start_pieces: bool array `[vocabulary_size]`, from
            `start_piece_table`; True where a piece begins a word.
        masked_lm_prob: float in [0, 1], share of tokens to predict
            (0 disables masking, e.g. for dynamic masking later).
        max_predictions_per_seq: int, the most predictions per sequence.
        max_ngram: int, the longest masked span in words (3 in ALBERT).
        favor_shorter_ngram: bool, weights 1/n (True) or reversed.
        whole_word_masking: bool, mask whole words (True in ALBERT) or
            single pieces.

    Example:
    >>> table = np.ones(10, bool)
    >>> masker = NgramMasker(table, max_predictions_per_seq=2)
    >>> out = masker(np.array([2, 7, 8, 9, 3]), np.random.default_rng(0))
    >>> out.masked_lm_positions.size
    1
    """

    def __init__(
        self,
        start_pieces,
        masked_lm_prob=0.15,
        max_predictions_per_seq=20,
        max_ngram=3,
        favor_shorter_ngram=True,
        whole_word_masking=True,
    ):
        start_pieces = np.asarray(start_pieces)
        if start_pieces.dtype != bool or start_pieces.ndim != 1:
            raise ValueError(
                "`start_pieces` must be a 1-D bool array, one entry per id. "
                f"Received: dtype={start_pieces.dtype}, "
                f"shape={start_pieces.shape}"
            )
        if start_pieces.size <= MASK_ID:
            raise ValueError(
                "`start_pieces` must cover ALBERT's special ids 0..4 and at "
                f"least one more piece. Received: size={start_pieces.size}"
            )
        check_fraction("masked_lm_prob", masked_lm_prob)
        check_positive_int("max_predictions_per_seq", max_predictions_per_seq)
        self.start_pieces = start_pieces
        self.vocabulary_size = start_pieces.size
        self.masked_lm_prob = float(masked_lm_prob)
        self.max_predictions_per_seq = max_predictions_per_seq
        self.whole_word_masking = bool(whole_word_masking)
        self._cdf = np.cumsum(ngram_probabilities(max_ngram, favor_shorter_ngram))
        self._cdf[-1] = 1.0
        special = np.zeros(start_pieces.size, bool)
        special[[CLS_ID, SEP_ID]] = True
        self._special = special

    def words(self, token_ids):
        """Returns `(candidate_positions, word_starts, token_boundary)`.

        `word_starts` flags the candidates that begin a word. As in the
        original, the first candidate always does, and a continuation piece
        right after `[SEP]` joins the last word before it.
        """
        special = self._special[token_ids]
        starts = self.start_pieces[token_ids]
        token_boundary = (special | starts).astype(np.int32)
        candidates = np.flatnonzero(~special)
        if self.whole_word_masking:
            word_starts = starts[candidates]
            word_starts[:1] = True
        else:
            word_starts = np.ones(candidates.size, bool)
        return candidates, word_starts, token_boundary

    def __call__(self, token_ids, rng):
        """Masks `token_ids` (1-D ints with `[CLS]`/`[SEP]`, no padding).

        Returns a `MaskedTokens` with the new ids, the sorted masked
        positions, their original ids and the token boundary.
        """
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 1 or token_ids.dtype.kind not in "iu":
            raise ValueError(
                "`token_ids` must be a 1-D integer array. Received: dtype="
                f"{token_ids.dtype}, shape={token_ids.shape}"
            )
        candidates, word_starts, token_boundary = self.words(token_ids)
        num_words = int(word_starts.sum())
        if self.masked_lm_prob == 0.0 or num_words == 0:
            empty = np.zeros(0, np.int32)
            return MaskedTokens(token_ids.copy(), empty, empty, token_boundary)
        budget = num_to_predict(
            token_ids.size, self.masked_lm_prob, self.max_predictions_per_seq
        )
        order = rng.permutation(num_words)
        sizes = np.searchsorted(self._cdf, rng.random(num_words), side="right") + 1
        masked = self.apply(
            token_ids, candidates, word_starts, budget, order, sizes, rng=rng
        )
        return MaskedTokens(*masked, token_boundary)

    def apply(
        self,
        token_ids,
        candidates,
        word_starts,
        budget,
        order,
        ngram_sizes,
        rng=None,
        replace_draws=None,
        random_ids=None,
    ):
        """Masks with given random draws: `(ids, positions, labels)`.

        `replace_draws` `[2, k]` uniforms (first < 0.8 -> `[MASK]`, else
        second < 0.5 -> keep, else `random_ids`) are drawn from `rng` when
        not given; tests pass them to compare with `mask_ngrams_tf`.
        """
        word_offsets = np.flatnonzero(word_starts).tolist()
        word_offsets.append(candidates.size)
        spans = select_masked_words(
            word_offsets, _in_chunks(order), _in_chunks(ngram_sizes), budget
        )
        chosen = np.zeros(candidates.size, bool)
        for first, end in spans:
            chosen[word_offsets[first] : word_offsets[end]] = True
        positions = candidates[chosen].astype(np.int32)
        labels = token_ids[positions].astype(np.int32)
        count = positions.size
        if replace_draws is None:
            # One call for all draws: Generator calls cost more than the work.
            draws = rng.random((3, count))
            replace_draws = draws[:2]
            random_ids = (draws[2] * self.vocabulary_size).astype(np.int32)
        replacement = np.where(
            replace_draws[0, :count] < 0.8,
            MASK_ID,
            np.where(replace_draws[1, :count] < 0.5, labels, random_ids[:count]),
        )
        output = token_ids.copy()
        output[positions] = replacement
        return output, positions, labels


def _in_chunks(values, first=64):
    """Yields an array's items as Python ints, converting lazily: the
    greedy selection usually stops long before the last word."""
    yield from values[:first].tolist()
    yield from values[first:].tolist()


class MaskedTokens(typing.NamedTuple):
    """One masked sequence; positions sorted, labels the original ids."""

    token_ids: np.ndarray
    masked_lm_positions: np.ndarray
    masked_lm_ids: np.ndarray
    token_boundary: np.ndarray




def mask_ngrams_tf(
    features,
    seed,
    vocabulary_size,
    masked_lm_prob=0.15,
    max_ngram=3,
    favor_shorter_ngram=True,
    whole_word_masking=True,
):
    """Re-draws ALBERT n-gram masks for a batch, in TensorFlow ops.

    Restores the original ids from the stored `masked_lm_*` features, then
    masks again with fresh randomness: every epoch sees new masks. Words come
    from `token_boundary`, as Google stores it for "on-the-fly whole word
    masking". Shapes stay static (`[batch, seq]`, `[batch, predictions]`),
    so this runs in a TPU input pipeline.

    Args:
        features: dict of batched int32 tensors with the TFRecord feature
            names (`input_ids`, `input_mask`, `token_boundary`,
            `masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights`, ...).
        seed: int64 tensor of shape `[2]`, a stateless random seed.
        vocabulary_size: int, random replacements are drawn from
            `[0, vocabulary_size)` as in the original.
        masked_lm_prob: float in (0, 1], share of tokens to predict.
        max_ngram: int, the longest masked span in words.
        favor_shorter_ngram: bool, n-gram weights 1/n (True) or reversed.
        whole_word_masking: bool, mask whole words or single pieces.

    Returns:
        A new dict with `input_ids`, `masked_lm_positions`, `masked_lm_ids`
        and `masked_lm_weights` replaced.

    Example:
    >>> features = {"input_ids": tf.constant([[2, 9, 9, 3]]),
    ...     "input_mask": tf.ones([1, 4], tf.int32),
    ...     "token_boundary": tf.ones([1, 4], tf.int32),
    ...     "masked_lm_positions": tf.zeros([1, 2], tf.int32),
    ...     "masked_lm_ids": tf.zeros([1, 2], tf.int32),
    ...     "masked_lm_weights": tf.zeros([1, 2])}
    >>> out = mask_ngrams_tf(features, tf.constant([1, 2], tf.int64), 10)
    >>> int(tf.reduce_sum(out["masked_lm_weights"]))
    1
    """
    check_positive_int("vocabulary_size", vocabulary_size)
    check_fraction("masked_lm_prob", masked_lm_prob)
    if masked_lm_prob == 0:
        raise ValueError(
            "`masked_lm_prob` must be > 0 for dynamic masking. "
            f"Received: masked_lm_prob={masked_lm_prob!r}"
        )
    missing = [k for k in _MASKING_FEATURES if k not in features]
    if missing:
        raise ValueError(
            f"`features` must hold {_MASKING_FEATURES}. Missing: {missing}"
        )
    ids = tf.convert_to_tensor(features["input_ids"])
    batch_size, sequence_length = ids.shape
    predictions = features["masked_lm_positions"].shape[1]
    if batch_size is None or sequence_length is None or predictions is None:
        raise ValueError(
            "`features` must have static shapes (batch with "
            f"drop_remainder=True). Received: input_ids shape {ids.shape}, "
            f"masked_lm_positions shape {features['masked_lm_positions'].shape}"
        )
    order_seed, size_seed, replace_seed, id_seed = tf.unstack(
        tf.random.experimental.stateless_split(seed, 4)
    )
    original = restore_original_ids(features)
    words = find_words_tf(original, features, whole_word_masking)
    keys = tf.random.stateless_uniform([batch_size, sequence_length], order_seed)
    valid_word = tf.range(sequence_length)[None, :] < words["num_words"][:, None]
    order = tf.argsort(tf.where(valid_word, keys, 2.0), stable=True)
    logits = tf.math.log(
        tf.constant(ngram_probabilities(max_ngram, favor_shorter_ngram), tf.float32)
    )
    sizes = tf.random.stateless_categorical(
        tf.tile(logits[None, :], [batch_size, 1]),
        sequence_length,
        size_seed,
        dtype=tf.int32,
    ) + 1
    replace_draws = tf.random.stateless_uniform(
        [2, batch_size, predictions], replace_seed
    )
    random_ids = tf.random.stateless_uniform(
        [batch_size, predictions],
        id_seed,
        minval=0,
        maxval=vocabulary_size,
        dtype=tf.int32,
    )
    return apply_masks_tf(
        features, original, words, masked_lm_prob, max_ngram, order, sizes,
        replace_draws, random_ids,
    )


_MASKING_FEATURES = (
    "input_ids",
    "input_mask",
    "token_boundary",
    "masked_lm_positions",
    "masked_lm_ids",
    "masked_lm_weights",
)


def restore_original_ids(features):
    """Undoes stored masks: writes `masked_lm_ids` back at their positions."""
    ids = tf.cast(features["input_ids"], tf.int32)
    real = tf.cast(features["masked_lm_weights"], tf.float32) > 0
    # Padded predictions point at position 0 ([CLS], never masked): rewrite
    # it with itself so duplicate indices agree.
    positions = tf.where(real, tf.cast(features["masked_lm_positions"], tf.int32), 0)
    updates = tf.where(real, tf.cast(features["masked_lm_ids"], tf.int32), ids[:, :1])
    return tf.tensor_scatter_nd_update(ids, _batch_indices(positions), updates)


def _batch_indices(positions):
    shape = tf.shape(positions)
    rows = tf.broadcast_to(tf.range(shape[0])[:, None], shape)
    return tf.stack([rows, positions], axis=-1)


def find_words_tf(ids, features, whole_word_masking):
    """Candidates and words of a batch, as `NgramMasker.words` finds them."""
    sequence_length = ids.shape[1]
    mask = tf.cast(features["input_mask"], tf.int32) > 0
    candidates = mask & (ids != CLS_ID) & (ids != SEP_ID)
    candidate_rank = tf.cumsum(tf.cast(candidates, tf.int32), axis=1) - 1
    first = candidates & (candidate_rank == 0)
    if whole_word_masking:
        boundary = tf.cast(features["token_boundary"], tf.int32) > 0
        starts = candidates & (boundary | first)
    else:
        starts = candidates
    positions = tf.range(sequence_length)[None, :]
    num_candidates = tf.reduce_sum(tf.cast(candidates, tf.int32), axis=1)
    num_words = tf.reduce_sum(tf.cast(starts, tf.int32), axis=1)
    # Word start positions in order, then their offsets among candidates.
    start_positions = tf.argsort(
        tf.where(starts, positions, sequence_length + positions), stable=True
    )
    offsets = tf.gather(candidate_rank, start_positions, batch_dims=1)
    offsets = tf.where(positions < num_words[:, None], offsets, num_candidates[:, None])
    offsets = tf.concat([offsets, num_candidates[:, None]], axis=1)
    word_of_position = tf.maximum(tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1, 0)
    return {
        "candidates": candidates,
        "num_words": num_words,
        "offsets": offsets,
        "word_of_position": word_of_position,
        "num_tokens": tf.reduce_sum(tf.cast(mask, tf.int32), axis=1),
    }


def apply_masks_tf(
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
    """Masks a batch with given random draws (the same as `NgramMasker.apply`)."""
    batch_size, sequence_length = original.shape
    predictions = features["masked_lm_positions"].shape[1]
    offsets, num_words = words["offsets"], words["num_words"]
    # Python's round() is half-to-even, as tf.round; float64 as Python.
    budget = tf.cast(
        tf.round(tf.cast(words["num_tokens"], tf.float64) * masked_lm_prob), tf.int32
    )
    budget = tf.minimum(predictions, tf.maximum(1, budget))
    word_index = tf.range(sequence_length)[None, :]

    def keep_going(step, covered, count):
        del covered
        return tf.reduce_any((step < num_words) & (count < budget))

    def visit(step, covered, count):
        word = order[:, step]
        size = ngram_sizes[:, step]
        start = tf.gather(offsets, word, batch_dims=1)
        end = tf.fill([batch_size], -1)
        need = tf.zeros([batch_size], tf.int32)
        # The longest n-gram that fits the budget wins: assign shortest first.
        for drop in reversed(range(max_ngram)):
            # Clamped into range; impossible lengths are rejected by `fits`.
            candidate_end = tf.minimum(tf.maximum(word + size - drop, word), num_words)
            candidate_need = tf.gather(offsets, candidate_end, batch_dims=1) - start
            fits = (size - drop >= 1) & (count + candidate_need <= budget)
            end = tf.where(fits, candidate_end, end)
            need = tf.where(fits, candidate_need, need)
        span = (word_index >= word[:, None]) & (word_index < end[:, None])
        overlaps = tf.reduce_any(span & covered, axis=1)
        accept = (step < num_words) & (count < budget) & (end >= 0) & ~overlaps
        covered = covered | (span & accept[:, None])
        count = count + tf.where(accept, need, 0)
        return step + 1, covered, count

    _, covered, _ = tf.while_loop(
        keep_going,
        visit,
        (
            tf.constant(0),
            tf.zeros([batch_size, sequence_length], tf.bool),
            tf.zeros([batch_size], tf.int32),
        ),
        maximum_iterations=sequence_length,
    )
    masked = words["candidates"] & tf.gather(
        covered, words["word_of_position"], batch_dims=1
    )
    # Sorted masked positions, padded with 0, via top_k on `L - position`.
    scores = tf.where(masked, sequence_length - word_index, 0)
    top, _ = tf.math.top_k(scores, k=predictions)
    real = top > 0
    positions = tf.where(real, sequence_length - top, 0)
    labels = tf.gather(original, positions, batch_dims=1)
    replacement = tf.where(
        replace_draws[0] < 0.8,
        MASK_ID,
        tf.where(replace_draws[1] < 0.5, labels, random_ids),
    )
    replacement = tf.where(real, replacement, labels)
    input_ids = tf.tensor_scatter_nd_update(
        original, _batch_indices(positions), replacement
    )
    outputs = dict(features)
    outputs["input_ids"] = input_ids
    outputs["masked_lm_positions"] = positions
    outputs["masked_lm_ids"] = tf.where(real, labels, 0)
    outputs["masked_lm_weights"] = tf.cast(real, tf.float32)
    return outputs
