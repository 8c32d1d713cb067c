"""Span QA from raw strings inside the graph, for the serving SavedModel.

The same word split as `question_answering_spans.split_words` (whitespace
separates; each punctuation mark, symbol and CJK character is a word), done
with RE2 on UTF-8 bytes, so the answer is a byte-exact substring of the
context. One window: a context longer than the window is truncated (the
Python `model.answer` windows it with `doc_stride` instead).
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


def _first_n(ragged, limits):
    """Keeps the first `limits[i]` values of each row of a 2-D ragged tensor."""
    positions = tf.ragged.range(ragged.row_lengths())
    return tf.ragged.boolean_mask(ragged, positions < tf.cast(limits, positions.dtype)[:, None])


def qa_features(tokenizer, question, context, sequence_length, max_question_length):
    """Packed inputs, and for each position its word's byte span (-1 off context)."""
    # Tensors in, tensors out, even eagerly (keras-hub would return lists).
    with no_convert_scope():
        return _qa_features(tokenizer, question, context, sequence_length, max_question_length)


def _qa_features(tokenizer, question, context, sequence_length, max_question_length):
    words, starts, ends = _words(context)
    pieces = tokenizer._tokenize_tf(words.flat_values)  # [all words, (pieces)]
    lengths = pieces.row_lengths()
    piece_splits = tf.gather(tf.concat([[0], tf.cumsum(lengths)], 0), words.row_splits)
    context_ids = tf.RaggedTensor.from_row_splits(pieces.flat_values, piece_splits)
    word_of_piece = tf.RaggedTensor.from_row_splits(
        tf.repeat(tf.range(tf.size(lengths, out_type=tf.int64)), lengths), piece_splits
    )
    question_ids = tokenizer._tokenize_tf(question)[:, :max_question_length]
    room = sequence_length - question_ids.row_lengths() - 3
    context_ids = _first_n(context_ids, room)
    word_of_piece = _first_n(word_of_piece, room)
    batch = tf.shape(question)[0]

    def column(value):
        return tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.cast(value, tf.int32)))

    cls, sep = column(tokenizer.cls_token_id), column(tokenizer.sep_token_id)
    first = tf.concat([cls, tf.cast(question_ids, tf.int32), sep], axis=1)
    second = tf.concat([tf.cast(context_ids, tf.int32), sep], axis=1)
    shape = [None, sequence_length]
    token_ids = tf.concat([first, second], axis=1).to_tensor(0, shape=shape)
    segment_ids = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1).to_tensor(0, shape=shape)
    flat_starts = tf.gather(starts.flat_values, word_of_piece)
    flat_ends = tf.gather(ends.flat_values, word_of_piece)
    # -1 marks positions outside the context: [CLS] question [SEP] ... [SEP].
    prefix = tf.cast(tf.zeros_like(first), tf.int64) - 1
    suffix = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(-1, tf.int64)))
    byte_start = tf.concat([prefix, flat_starts, suffix], 1).to_tensor(-1, shape=shape)
    byte_end = tf.concat([prefix, flat_ends, suffix], 1).to_tensor(-1, shape=shape)
    features = {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": tf.cast(token_ids != tokenizer.pad_token_id, tf.int32),
    }
    return features, byte_start, byte_end


def best_span(context, start_logits, end_logits, byte_start, byte_end, max_answer_length):
    """The highest `start + end` span inside the context, as text and bytes."""
    valid = byte_start >= 0
    scores = start_logits[:, :, None] + end_logits[:, None, :]
    length = tf.shape(start_logits)[1]
    positions = tf.range(length)
    ordered = (positions[None, :] >= positions[:, None]) & (
        positions[None, :] - positions[:, None] < max_answer_length
    )
    allowed = ordered[None] & valid[:, :, None] & valid[:, None, :]
    scores = tf.where(allowed, scores, tf.float32.min)
    flat = tf.argmax(tf.reshape(scores, [tf.shape(scores)[0], -1]), axis=-1, output_type=tf.int32)
    start, end = flat // length, flat % length
    first = tf.gather(byte_start, start, batch_dims=1)
    last = tf.gather(byte_end, end, batch_dims=1)
    found = tf.reduce_any(allowed, axis=[1, 2])
    first = tf.where(found, first, 0)
    last = tf.where(found, last, 0)
    answer = tf.strings.substr(context, tf.cast(first, tf.int32), tf.cast(last - first, tf.int32))
    score = tf.reduce_max(tf.reshape(scores, [tf.shape(scores)[0], -1]), axis=-1)
    return answer, first, last, score
