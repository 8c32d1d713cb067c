"""Span QA from raw strings inside the graph, for the serving SavedModel.

The same word split as `question_answering_spans.split_words` (whitespace
separates; each punctuation mark, symbol and CJK character is a word), done
with RE2 on UTF-8 bytes, so the answer is a byte-exact substring of the
context. Long contexts are windowed exactly as `build_windows` does
(`doc_stride`, each piece a start candidate only in the window giving it
most context), every window runs through the model, and each example keeps
its best span over all its windows: the answers of `model.answer`.
"""

import tensorflow as tf
import tensorflow_text
from keras_hub.src.utils.tensor_utils import no_convert_scope

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_SEPARATORS = r"[\s\p{Z}\p{Cc}\p{Cf}]"
_ALONE = rf"[\p{{P}}\p{{S}}{_CJK}]"


def _words(context):
    return tensorflow_text.regex_split_with_offsets(
        context, f"{_SEPARATORS}|{_ALONE}", _ALONE
    )


def windowed_qa_features(tokenizer, question, context, sequence_length, max_question_length, doc_stride):
    """Packed windows of every (question, context) pair.

    Returns the model features [windows, sequence_length], each position's
    word byte span in its context (-1 off the context), whether a position
    may start an answer, and each window's example index.
    """
    # Tensors in, tensors out, even eagerly (keras-hub would return lists).
    with no_convert_scope():
        return _windowed(tokenizer, question, context, sequence_length, max_question_length, doc_stride)


def _windowed(tokenizer, question, context, sequence_length, max_question_length, doc_stride):
    words, starts, ends = _words(context)
    pieces = tokenizer._tokenize_tf(words.flat_values)
    lengths = pieces.row_lengths()
    piece_splits = tf.gather(tf.concat([[0], tf.cumsum(lengths)], 0), words.row_splits)
    piece_ids = tf.cast(pieces.flat_values, tf.int32)
    piece_word = tf.repeat(tf.range(tf.size(lengths, out_type=tf.int64)), lengths)
    total = piece_splits[1:] - piece_splits[:-1]  # pieces per context
    question_ids = tf.cast(tokenizer._tokenize_tf(question)[:, :max_question_length], tf.int32)
    room = sequence_length - question_ids.row_lengths() - 3
    stride = tf.minimum(tf.cast(doc_stride, room.dtype), room)
    extra = tf.maximum(total - room, 0)
    count = 1 + (extra + stride - 1) // stride  # windows per example
    example = tf.repeat(tf.range(tf.size(count, out_type=tf.int64)), count)
    index = tf.ragged.range(count).flat_values
    w_room = tf.gather(room, example)
    w_start = index * tf.gather(stride, example)
    w_length = tf.minimum(w_room, tf.gather(total, example) - w_start)
    local = tf.ragged.range(w_start, w_start + w_length)  # piece positions in the context
    glob = local + tf.gather(piece_splits[:-1], example)[:, None]  # in the flat piece list
    window_ids = glob.with_flat_values(tf.gather(piece_ids, glob.flat_values))
    window_word = glob.with_flat_values(tf.gather(piece_word, glob.flat_values))
    # A piece counts as a start only in the window giving it most context
    # (min distance to either end, plus 0.01 x window room), first window on ties.
    offset = local - w_start[:, None]
    score = tf.cast(tf.minimum(offset, (w_length - 1)[:, None] - offset), tf.float64) + 0.01 * tf.cast(w_room, tf.float64)[:, None]
    number = tf.range(tf.size(example, out_type=tf.int64))
    segments = tf.cast(glob.flat_values, tf.int32)
    pieces_total = tf.cast(tf.size(piece_ids), tf.int32)
    best_score = tf.math.unsorted_segment_max(score.flat_values, segments, pieces_total)
    is_best = tf.equal(score.flat_values, tf.gather(best_score, segments))
    window_of_piece = tf.repeat(number, w_length)
    candidates = tf.where(is_best, window_of_piece, tf.int64.max)
    owner = tf.math.unsorted_segment_min(candidates, segments, pieces_total)
    max_context = glob.with_flat_values(tf.equal(tf.gather(owner, segments), window_of_piece))

    w_question = tf.gather(question_ids, example)
    batch = tf.shape(example)[0]

    def column(value, dtype=tf.int32):
        return tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.cast(value, dtype)))

    cls, sep = column(tokenizer.cls_token_id), column(tokenizer.sep_token_id)
    first = tf.concat([cls, w_question, sep], axis=1)
    second = tf.concat([window_ids, sep], axis=1)
    shape = [None, sequence_length]
    token_ids = tf.concat([first, second], axis=1).to_tensor(0, shape=shape)
    segment_ids = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1).to_tensor(0, shape=shape)
    flat_starts = tf.gather(starts.flat_values, window_word)
    flat_ends = tf.gather(ends.flat_values, window_word)
    prefix = tf.cast(tf.zeros_like(first), tf.int64) - 1
    suffix = column(-1, tf.int64)
    byte_start = tf.concat([prefix, flat_starts, suffix], 1).to_tensor(-1, shape=shape)
    byte_end = tf.concat([prefix, flat_ends, suffix], 1).to_tensor(-1, shape=shape)
    no = tf.cast(tf.zeros_like(first), tf.bool)
    start_allowed = tf.concat([no, max_context, column(False, tf.bool)], 1).to_tensor(False, shape=shape)
    features = {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": tf.cast(token_ids != tokenizer.pad_token_id, tf.int32),
    }
    return features, byte_start, byte_end, start_allowed, example


def best_answers_over_windows(
    context, start_logits, end_logits, byte_start, byte_end, start_allowed, example, max_answer_length
):
    """Per example, the highest `start + end` span over all its windows."""
    valid = byte_start >= 0
    length = tf.shape(start_logits)[1]
    positions = tf.range(length)
    ordered = (positions[None, :] >= positions[:, None]) & (
        positions[None, :] - positions[:, None] < max_answer_length
    )
    allowed = ordered[None] & start_allowed[:, :, None] & valid[:, None, :]
    scores = tf.where(allowed, start_logits[:, :, None] + end_logits[:, None, :], tf.float32.min)
    scores = tf.reshape(scores, [tf.shape(scores)[0], -1])
    flat = tf.argmax(scores, axis=-1, output_type=tf.int32)
    window_score = tf.reduce_max(scores, axis=-1)
    first = tf.gather(byte_start, flat // length, batch_dims=1)
    last = tf.gather(byte_end, flat % length, batch_dims=1)
    found = tf.reduce_any(allowed, axis=[1, 2])
    first, last = tf.where(found, first, 0), tf.where(found, last, 0)
    # The best window of each example (the first one on ties).
    examples = tf.shape(context, out_type=tf.int64)[0]
    number = tf.range(tf.size(example, out_type=tf.int64))
    best = tf.math.unsorted_segment_max(window_score, example, examples)
    chosen = tf.math.unsorted_segment_min(
        tf.where(tf.equal(window_score, tf.gather(best, example)), number, tf.int64.max), example, examples
    )
    first, last = tf.gather(first, chosen), tf.gather(last, chosen)
    answer = tf.strings.substr(context, tf.cast(first, tf.int32), tf.cast(last - first, tf.int32))
    null = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0], example, examples)
    return {
        "start_logits": tf.gather(start_logits, chosen),
        "end_logits": tf.gather(end_logits, chosen),
        "answer": answer,
        "answer_start_byte": first,
        "answer_end_byte": last,
        # No span at all (an empty context) scores -inf, as in Python.
        "answer_score": tf.where(best > tf.float32.min, best, float("-inf")),
        "null_score": null,
    }
