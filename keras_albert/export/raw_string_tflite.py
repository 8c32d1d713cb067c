"""TFLite classifiers that take raw strings: tokenizer and packing inside.

TFLite has no kernel for tensorflow-text's `SentencepieceOp` and Python has
no Flex delegate, so the usual in-graph tokenizer cannot run there. This
graph uses what can: tensorflow-text's `FastSentencepieceTokenizer` (a
custom op with a TFLite kernel) on a SentencePiece model with ALBERT's
preprocessing folded into its normaliser (`folded_sentencepiece`), then
`[CLS] a [SEP] (b [SEP])` packing and truncation written with dense builtin
ops only (gather, where, minimum). Run the file with tensorflow-text's op
registrar:

    from ai_edge_litert.interpreter import InterpreterWithCustomOps
    import tensorflow_text
    interpreter = InterpreterWithCustomOps(
        model_content=content,
        custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS)
    runner = interpreter.get_signature_runner()
    runner(text=np.array([b"some text"]))  # {"logits", "probabilities"}

Inputs have a fixed batch size (`batch_size`, default 1). Every file is run
right after conversion and compared with the Keras task on the same texts.
"""

import logging

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from keras_albert.export.folded_sentencepiece import folded_sentencepiece_proto
from keras_albert.export.tflite_export import check_and_calibration_texts
from keras_albert.export.tflite_export import check_output_file
from keras_albert.export.tflite_export import check_quantize
from keras_albert.export.tflite_export import check_sequence_length
from keras_albert.export.tflite_export import compare_outputs
from keras_albert.export.tflite_export import converter_for
from keras_albert.export.tflite_export import finish_conversion
from keras_albert.export.tflite_export import set_quantization
from keras_albert.export.tflite_export import write_atomically
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.preprocessor_inputs import padded_to
from keras_albert.serving.serving_signature import logit_outputs
from keras_albert.utils.native_notices import TFLITE_NOTICES
from keras_albert.utils.native_notices import notices_held_back
from keras_albert.utils.progress import logged_step

_logger = logging.getLogger(__name__)


def _check_classifier(task):
    preprocessor = getattr(task, "preprocessor", None)
    if not task.built or preprocessor is None:
        raise ValueError("Export needs a built task with a preprocessor.")
    if not isinstance(task, AlbertClassifier):
        raise ValueError(
            "Raw-string TFLite packs `[CLS] text [SEP] (text_pair [SEP])` "
            "and supports classifiers and regressors (`AlbertClassifier`). "
            f"Received a {type(task).__name__}; export it with token-id "
            "inputs (`raw_strings=False`) and tokenize outside."
        )


def _check_batch_size(batch_size):
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(
            f"`batch_size` must be a positive int. Received: batch_size={batch_size!r}"
        )


def _ragged_parts(tokens, pad_id):
    """Flat ids (plus one pad, so a gather never hits an empty tensor),
    row starts and row lengths, each int32."""
    values = tf.concat([tf.cast(tokens.flat_values, tf.int32), [pad_id]], 0)
    splits = tf.cast(tokens.row_splits, tf.int32)
    return values, splits[:-1, None], (splits[1:] - splits[:-1])[:, None]


def _kept_lengths(length_a, length_b, budget, truncate):
    """How many tokens of each segment fit in `budget`, as the keras-hub
    packer's round-robin (alternate, starting with `a`) or waterfall trim."""
    if truncate == "waterfall":
        keep_a = tf.minimum(length_a, budget)
    else:
        keep_a = tf.minimum(length_a, tf.maximum((budget + 1) // 2, budget - length_b))
    return keep_a, tf.minimum(length_b, budget - keep_a)


def pack_dense(tokens_a, tokens_b, sequence_length, truncate, special_ids):
    """Ragged token ids -> `token_ids`, `segment_ids`, `padding_mask`
    ([batch, sequence_length] int32), with TFLite builtin ops only."""
    cls_id, sep_id, pad_id = special_ids
    values_a, start_a, length_a = _ragged_parts(tokens_a, pad_id)
    # Full [batch, sequence_length] operands everywhere: TFLite's SELECT
    # lowers broadcasting `where`s through ops with no bool kernel.
    positions = tf.range(sequence_length, dtype=tf.int32)[None, :] + tf.zeros_like(start_a)
    if tokens_b is None:
        keep_a = tf.minimum(length_a, sequence_length - 2)
    else:
        values_b, start_b, length_b = _ragged_parts(tokens_b, pad_id)
        keep_a, keep_b = _kept_lengths(length_a, length_b, sequence_length - 3, truncate)

    def fill(value):
        return tf.fill(tf.shape(positions), value)

    def gather(values, index):
        return tf.gather(values, tf.clip_by_value(index, 0, tf.size(values) - 1))

    end_a = keep_a + 1  # Position of the first [SEP].
    token_ids = tf.where(positions < end_a, gather(values_a, start_a + positions - 1), fill(pad_id))
    token_ids = tf.where(positions == end_a, fill(sep_id), token_ids)
    token_ids = tf.where(positions == 0, fill(cls_id), token_ids)
    segment_ids = fill(0)
    total = end_a + 1
    if tokens_b is not None:
        start_of_b = end_a + 1
        end_b = start_of_b + keep_b  # Position of the second [SEP].
        token_b = gather(values_b, start_b + positions - start_of_b)
        in_b = tf.logical_and(positions >= start_of_b, positions < end_b)
        token_ids = tf.where(in_b, token_b, token_ids)
        token_ids = tf.where(positions == end_b, fill(sep_id), token_ids)
        segment_ids = tf.where(
            tf.logical_and(positions >= start_of_b, positions <= end_b), fill(1), segment_ids
        )
        total = end_b + 1
    padding_mask = tf.where(positions < total, fill(1), fill(0))
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}


def _serving_function(task, sequence_length, pair, batch_size):
    preprocessor = task.preprocessor
    tokenizer = preprocessor.tokenizer
    fast = tf_text.FastSentencepieceTokenizer(
        folded_sentencepiece_proto(tokenizer.proto, tokenizer.lowercase)
    )
    special_ids = (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)

    def logits(text, text_pair):
        tokens_b = None if text_pair is None else fast.tokenize(text_pair)
        features = pack_dense(
            fast.tokenize(text), tokens_b, sequence_length, preprocessor.truncate, special_ids
        )
        return logit_outputs(task(features, training=False), task.is_regression)

    spec = tf.TensorSpec([batch_size], tf.string, name="text")
    if pair:
        pair_spec = tf.TensorSpec([batch_size], tf.string, name="text_pair")
        return tf.function(logits, input_signature=[spec, pair_spec])
    return tf.function(lambda text: logits(text, None), input_signature=[spec])


def _batches(texts, batch_size):
    """Fixed-size chunks of `texts`, the last one filled with empty strings."""
    texts = [t.encode("utf-8") if isinstance(t, str) else bytes(t) for t in texts]
    for start in range(0, len(texts), batch_size):
        chunk = texts[start : start + batch_size]
        yield np.array(chunk + [b""] * (batch_size - len(chunk)), dtype=object), len(chunk)


def batch_size_message(name, count, batch_size):
    """The one line said when a call does not hold the file's batch size."""
    texts = "text" if batch_size == 1 else "texts"
    return (
        f"This raw-string TFLite file takes exactly {batch_size} {texts} per call "
        f"(exported with --batch_size {batch_size}). Received {count} in `{name}`. "
        f"Run the texts in batches of {batch_size} (`run_raw_string_tflite` in "
        f"keras_albert.export.raw_string_tflite splits any number), or export "
        f"again with --batch_size {count}."
    )


def _batch_checked(runner, batch_size):
    """`runner` that refuses a call with the wrong number of texts in one
    line: LiteRT itself cannot resize the tokenizer's outputs and fails deep
    inside with "RESHAPE failed to prepare"."""

    def run(**inputs):
        for name, value in inputs.items():
            if len(value) != batch_size:
                raise ValueError(batch_size_message(name, len(value), batch_size))
        return runner(**inputs)

    return run


def raw_string_runner(content):
    """(LiteRT signature runner, its fixed batch size) for a raw-string file.

    The runner checks each call's number of texts against the batch size.
    """
    from ai_edge_litert.interpreter import InterpreterWithCustomOps

    interpreter = InterpreterWithCustomOps(
        model_content=content,
        custom_op_registerers=tf_text.tflite_registrar.SELECT_TFTEXT_OPS,
    )
    batch_size = int(interpreter.get_input_details()[0]["shape"][0])
    return _batch_checked(interpreter.get_signature_runner(), batch_size), batch_size


def run_raw_string_tflite(content, texts, text_pairs=None, runner=None):
    """{output: array} from a raw-string TFLite model, in input order.

    Any number of texts: they are run in batches of the file's fixed batch
    size, the last one filled with empty strings. Pass `runner` (from
    `raw_string_runner`) to reuse one interpreter.
    """
    if text_pairs is not None and len(text_pairs) != len(texts):
        raise ValueError(
            f"`text_pairs` must hold one text per text: received {len(text_pairs)} "
            f"pairs for {len(texts)} texts."
        )
    runner, batch_size = runner or raw_string_runner(content)
    outputs = []
    chunks = _batches(texts, batch_size)
    pair_chunks = _batches(text_pairs, batch_size) if text_pairs is not None else None
    for text, count in chunks:
        inputs = {"text": text}
        if pair_chunks is not None:
            inputs["text_pair"] = next(pair_chunks)[0]
        outputs.append({k: v[:count] for k, v in runner(**inputs).items()})
    return {name: np.concatenate([o[name] for o in outputs], 0) for name in outputs[0]}


def _keras_outputs(task, texts, text_pairs, sequence_length):
    with padded_to(task.preprocessor, sequence_length) as preprocessor:
        x = texts if text_pairs is None else (texts, text_pairs)
        features = preprocessor(x=x)
    outputs = logit_outputs(task(features, training=False), task.is_regression)
    return {k: np.asarray(v) for k, v in outputs.items()}


def _calibration_strings(strings):
    """`strings` as a fixed-width bytes array, the only string form the
    converter's calibrator reads: given an object array (what the
    interpreter's runner takes) it tokenizes something else than the text,
    so int8 ranges were calibrated on the wrong tokens (measured: the
    calibrated logit range of one text is not that text's). Fixed-width
    bytes drop trailing NULs, which costs calibration nothing."""
    return np.asarray([bytes(s) for s in strings], dtype=bytes)


def _representative_dataset(texts, pair, batch_size):
    def batches():
        pairs = _batches(list(reversed(texts)), batch_size) if pair else None
        for text, _ in _batches(texts, batch_size):
            inputs = {"text": _calibration_strings(text)}
            if pairs is not None:
                inputs["text_pair"] = _calibration_strings(next(pairs)[0])
            yield inputs

    return batches


def raw_string_converter(
    task, sequence_length, quantize="none", pair=False, batch_size=1, representative_texts=None
):
    """The TFLite converter for `task` with string inputs, set up for `quantize`."""
    converter = converter_for(task, _serving_function(task, sequence_length, pair, batch_size))
    converter.allow_custom_ops = True
    representative = None
    if quantize == "int8":
        if not representative_texts:
            raise ValueError("Full int8 needs `representative_texts` to calibrate on.")
        representative = _representative_dataset(list(representative_texts), pair, batch_size)
        # Calibration runs the graph, tokenizer op included, in its own
        # interpreter; this (private, but the only) hook gives it the kernels.
        converter.target_spec._experimental_custom_op_registerers = list(
            tf_text.tflite_registrar.SELECT_TFTEXT_OPS
        )
    set_quantization(converter, quantize, representative)
    return converter


def convert_raw_string(
    task, sequence_length, quantize="none", pair=False, batch_size=1, representative_texts=None
):
    """TFLite flatbuffer bytes for `task` with string inputs (not yet checked)."""
    converter = raw_string_converter(
        task, sequence_length, quantize, pair, batch_size, representative_texts
    )
    return finish_conversion(converter, quantize)


def export_raw_string_tflite(
    task,
    path,
    quantize="none",
    sequence_length=None,
    pair=False,
    batch_size=1,
    check_texts=None,
    representative_texts=None,
    overwrite=False,
):
    """Converts, checks against Keras on `check_texts`, and writes `path`.

    Full int8 calibrates on `representative_texts` and is checked on the
    `check_texts` it was not calibrated on, with the defaults and minimums
    of `export_tflite`. Returns a report: the measured difference (or
    argmax agreement), on how many texts, size and settings. A file that
    fails its check is never written.
    """
    check_quantize(quantize)
    _check_classifier(task)
    _check_batch_size(batch_size)
    if quantize == "int8" and batch_size != 1:
        # LiteRT's calibrator cannot resize the tokenizer's outputs for
        # more than one string (RESHAPE fails to prepare).
        raise ValueError(
            "Full int8 raw-string TFLite is calibrated one text at a time: "
            f"`batch_size` must be 1. Received: batch_size={batch_size!r}"
        )
    path = check_output_file(path, overwrite)
    sequence_length = check_sequence_length(task, sequence_length)
    check_texts, calibration, texts_report = check_and_calibration_texts(
        quantize, check_texts, representative_texts
    )
    pairs = list(reversed(check_texts)) if pair else None
    with logged_step(
        _logger, f"Converting to raw-string TFLite (quantize={quantize}, sequence_length={sequence_length})"
    ):
        content = convert_raw_string(task, sequence_length, quantize, pair, batch_size, calibration)
    with logged_step(_logger, f"Checking the TFLite model against Keras on {len(check_texts)} texts"):
        with notices_held_back(TFLITE_NOTICES):
            tflite_outputs = run_raw_string_tflite(content, check_texts, pairs)
        report = compare_outputs(
            tflite_outputs, _keras_outputs(task, check_texts, pairs, sequence_length), quantize)
    with logged_step(_logger, f"Writing {str(path)!r}"):
        write_atomically(path, content, overwrite)
    report.update(
        texts_report,
        path=str(path),
        bytes=len(content),
        sequence_length=sequence_length,
        batch_size=batch_size,
        raw_strings=True,
    )
    return report
