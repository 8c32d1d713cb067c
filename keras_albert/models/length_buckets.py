"""Predict on texts padded to their length bucket, not to the longest.

Real texts are mostly far shorter than the padded length: a 12-piece gloss
padded to 128 spends ~90 % of the encoder's work on padding. Texts are
grouped by token length into a few padded lengths (a bounded set, so XLA
and TPUs compile a bounded number of programs), each group is run at its
own length, and the outputs are put back in the original order. Padding
is masked out of attention, so results equal the unbucketed ones up to
float rounding.
"""

import numpy as np

from keras_albert.models.preprocessor_inputs import padded_to

DEFAULT_BUCKETS = (16, 32, 64, 128, 256, 512)


def bucket_lengths(sequence_length, buckets=DEFAULT_BUCKETS):
    """The padded lengths used: buckets below `sequence_length`, and it."""
    return sorted({b for b in buckets if b < sequence_length} | {sequence_length})


def _texts(x):
    """(first segments, second segments or None) if `x` is raw text."""
    def strings(values):
        return isinstance(values, (list, tuple, np.ndarray)) and len(values) > 0 and all(
            isinstance(v, (str, bytes)) for v in values
        )

    if isinstance(x, tuple) and len(x) == 2 and strings(x[0]) and strings(x[1]):
        if len(x[0]) != len(x[1]):
            raise ValueError(
                f"Text pairs need as many second texts as first texts; got {len(x[0])} and {len(x[1])}."
            )
        return list(x[0]), list(x[1])
    if strings(x):
        return list(x), None
    return None, None


def needed_lengths(tokenizer, first, second=None):
    """Packed length of each example: [CLS] a [SEP] (b [SEP])."""
    lengths = np.array([len(ids) for ids in tokenizer.tokenize(first)]) + 2
    if second is not None:
        lengths += np.array([len(ids) for ids in tokenizer.tokenize(second)]) + 1
    return lengths


def bucketed_predict(task, predict, x, buckets=DEFAULT_BUCKETS, **kwargs):
    """`predict(x, **kwargs)` per length bucket; outputs in `x`'s order.

    Returns None when `x` is not raw text (the caller predicts normally).
    """
    first, second = _texts(x)
    if first is None:
        return None
    preprocessor = task.preprocessor
    shapes = bucket_lengths(preprocessor.sequence_length, buckets)
    lengths = needed_lengths(preprocessor.tokenizer, first, second)
    bucket_of = np.searchsorted(shapes, np.minimum(lengths, shapes[-1]))
    outputs = None
    for index, shape in enumerate(shapes):
        members = np.flatnonzero(bucket_of == index)
        if not len(members):
            continue
        part = [first[i] for i in members]
        if second is not None:
            part = (part, [second[i] for i in members])
        with padded_to(preprocessor, shape):
            result = np.asarray(predict(part, **kwargs))
        if outputs is None:
            outputs = np.zeros((len(first),) + result.shape[1:], result.dtype)
        outputs[members] = result
    return outputs
