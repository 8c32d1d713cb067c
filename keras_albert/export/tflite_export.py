"""TFLite files from task models: float32, float16, dynamic-range and full int8.

The model takes `token_ids`, `segment_ids` and `padding_mask` ([batch,
sequence_length] int32; tokenize with the task's preprocessor) and returns
the task's outputs as float32: `logits` for classifiers, `start_logits`
and `end_logits` for span QA. Every converted file is run with LiteRT's interpreter right
after conversion and compared with the Keras model; a file that fails is
never written. (`from_concrete_functions` without the variables' owner
writes a model whose every output is NaN, with no warning: the variables
are passed in explicitly.)

Full int8 calibrates on `representative_texts` and is checked on
`check_texts` it was not calibrated on (`int8_calibration`); its dense
layers and embeddings are int8 and the ops between them float
(`int8_conversion`).
"""

import logging
import pathlib

import numpy as np
import tensorflow as tf

from keras_albert.export.int8_calibration import calibration_and_check_texts
from keras_albert.export.int8_conversion import convert_int8
from keras_albert.export.tflite_metadata import add_classifier_metadata
from keras_albert.export.tflite_metadata import metadata_outputs
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.preprocessor_inputs import padded_to
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.atomic_file import write_file_atomically
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.native_notices import TFLITE_NOTICES
from keras_albert.utils.native_notices import notices_held_back
from keras_albert.utils.progress import logged_step
from keras_albert.utils.validation import check_sequence_length as check_length

QUANTIZATIONS = ("none", "float16", "dynamic", "int8")
# Max abs logit difference for float files; argmax agreement for integer ones.
FLOAT_TOLERANCE = {"none": 1e-4, "float16": 1e-2}
MIN_ARGMAX_AGREEMENT = 0.99
INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")
_logger = logging.getLogger(__name__)
DEFAULT_CHECK_TEXTS = ("A short check sentence.", "Another, longer one!")


def check_quantize(quantize):
    if quantize not in QUANTIZATIONS:
        raise ValueError(f"`quantize` must be one of {QUANTIZATIONS}. Received: quantize={quantize!r}")


def check_sequence_length(task, sequence_length):
    """`sequence_length`, defaulting to the preprocessor's, within the backbone's."""
    maximum = task.backbone.max_sequence_length
    if sequence_length is None:
        sequence_length = getattr(task.preprocessor, "sequence_length", None) or maximum
    return check_length(sequence_length, maximum=maximum)


def token_features(task, texts, sequence_length):
    """int32 model inputs for `texts`, padded to `sequence_length`.

    Span-QA tasks get each text as both question and context: any pair of
    real texts exercises the model the same way.
    """
    with padded_to(task.preprocessor, sequence_length) as preprocessor:
        if isinstance(task, AlbertQuestionAnswerer):
            features = preprocessor.windows(list(texts), list(texts)).features
        else:
            features = preprocessor(list(texts))
    return {name: np.asarray(features[name], "int32") for name in INPUT_NAMES}


def _as_output_dict(outputs):
    if not isinstance(outputs, dict):
        outputs = {"logits": outputs}
    return {name: tf.cast(value, tf.float32) for name, value in outputs.items()}


def _logits_function(task, sequence_length):
    specs = [tf.TensorSpec([None, sequence_length], tf.int32, name=name) for name in INPUT_NAMES]

    @tf.function(input_signature=specs)
    def logits(token_ids, segment_ids, padding_mask):
        features = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
        return _as_output_dict(task(features, training=False))

    return logits


def converter_for(task, function):
    """A builtins-only TFLite converter for `function`, a `tf.function` of
    `task`, given the variables' owner (without it, weights stay unset)."""
    holder = tf.Module()
    holder.variables_ = [v.value if hasattr(v, "value") else v for v in task.variables]
    holder.function = function
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [holder.function.get_concrete_function()], holder
    )
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    return converter


def set_quantization(converter, quantize, representative_dataset=None):
    """Configures `converter` for one of `QUANTIZATIONS`; full int8 needs a
    `representative_dataset` (a callable yielding input dicts)."""
    if quantize == "none":
        return
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantize == "float16":
        converter.target_spec.supported_types = [tf.float16]
    elif quantize == "int8":
        if representative_dataset is None:
            raise ValueError("Full int8 needs representative texts to calibrate on.")
        converter.representative_dataset = representative_dataset
        # Integer kernels everywhere they exist; float only where none does.
        converter.target_spec.supported_ops = [
            tf.lite.OpsSet.TFLITE_BUILTINS_INT8,
            tf.lite.OpsSet.TFLITE_BUILTINS,
        ]


def finish_conversion(converter, quantize):
    """Flatbuffer bytes from a converter set up by `set_quantization`."""
    with notices_held_back(TFLITE_NOTICES):
        if quantize == "int8":
            return convert_int8(converter)
        return converter.convert()


def token_converter(task, sequence_length, quantize="none", representative_features=None):
    """The TFLite converter for `task` with token inputs, set up for `quantize`."""
    converter = converter_for(task, _logits_function(task, sequence_length))
    representative = None
    if representative_features is not None:
        def representative():
            count = len(representative_features["token_ids"])
            for i in range(count):
                yield {name: representative_features[name][i : i + 1] for name in INPUT_NAMES}

    set_quantization(converter, quantize, representative)
    return converter


def convert(task, sequence_length, quantize="none", representative_features=None):
    """TFLite flatbuffer bytes for `task` (not yet checked)."""
    converter = token_converter(task, sequence_length, quantize, representative_features)
    return finish_conversion(converter, quantize)


def run_tflite(content, features, batch_size=1):
    """{output: array} from a TFLite model, `batch_size` rows per invocation."""
    from ai_edge_litert.interpreter import Interpreter

    outputs = []
    count = len(features["token_ids"])
    # The delegate notice comes with the first invocation.
    with notices_held_back(TFLITE_NOTICES):
        runner = Interpreter(model_content=content).get_signature_runner()
        for start in range(0, count, batch_size):
            chunk = {name: features[name][start : start + batch_size] for name in INPUT_NAMES}
            outputs.append(runner(**chunk))
    return {name: np.concatenate([o[name] for o in outputs], 0) for name in outputs[0]}


def keras_logits(task, features, batch_size=64):
    """{output: array} of the Keras model on token features (preprocessor bypassed)."""
    count = len(features["token_ids"])
    chunks = [
        _as_output_dict(task({k: v[i : i + batch_size] for k, v in features.items()}, training=False))
        for i in range(0, count, batch_size)
    ]
    return {name: np.concatenate([np.asarray(c[name]) for c in chunks], 0) for name in chunks[0]}


def argmax_agreement(outputs, expected):
    """Over the outputs, the smallest share of rows whose argmax the TFLite
    `outputs` and Keras's `expected` agree on (what the int8 gate reads)."""
    return min(float((outputs[n].argmax(-1) == expected[n].argmax(-1)).mean()) for n in expected)


def compare_outputs(outputs, expected, quantize):
    """Checks TFLite outputs against Keras's; returns what was measured.

    Float files must agree within `FLOAT_TOLERANCE`; integer ones on at
    least `MIN_ARGMAX_AGREEMENT` of argmaxes. Raises ValueError otherwise.
    """
    if sorted(outputs) != sorted(expected):
        raise ValueError(f"TFLite outputs {sorted(outputs)} differ from Keras's {sorted(expected)}.")
    if not all(np.isfinite(value).all() for value in outputs.values()):
        raise ValueError("The TFLite model returns non-finite values; it was not written.")
    difference = max(float(np.abs(outputs[n] - expected[n]).max()) for n in expected)
    report = {"quantize": quantize, "max_abs_difference": difference}
    if quantize in FLOAT_TOLERANCE:
        if difference > FLOAT_TOLERANCE[quantize]:
            raise ValueError(
                f"TFLite ({quantize}) differs from Keras by {difference:.2e} "
                f"(allowed {FLOAT_TOLERANCE[quantize]}); it was not written."
            )
    elif all(value.shape[-1] > 1 for value in expected.values()):
        agreement = argmax_agreement(outputs, expected)
        report["argmax_agreement"] = agreement
        if agreement < MIN_ARGMAX_AGREEMENT:
            raise ValueError(
                f"TFLite ({quantize}) agrees with Keras on {agreement:.1%} of "
                f"argmaxes (need {MIN_ARGMAX_AGREEMENT:.0%}); it was not written."
            )
    return report


def verify(content, task, features, quantize):
    """Runs the token-input TFLite model and compares it with Keras."""
    return compare_outputs(run_tflite(content, features), keras_logits(task, features), quantize)


def _is_tflite(path):
    with open(path, "rb") as handle:
        return handle.read(8)[4:8] == b"TFL3"  # The flatbuffer's file identifier.


def check_output_file(path, overwrite=False):
    """A new path, or an earlier TFLite file (any file with `overwrite`), in
    a directory we can write to: checked before the long conversion."""
    path = pathlib.Path(path)
    if path.is_dir():
        raise ValueError(f"`path` {str(path)!r} is a directory; pass a .tflite file path.")
    if path.exists() and not overwrite and not _is_tflite(path):
        raise ValueError(
            f"`path` {str(path)!r} is an existing file that is not a TFLite "
            "model; replacing it would destroy it. Pass a new path, or "
            "overwrite=True (CLI: --overwrite) to replace it anyway."
        )
    check_writable_directory(path.parent, name="path")
    return path


def write_atomically(path, content, overwrite=False):
    """Writes bytes next to `path` and renames: never a half-written file."""
    write_file_atomically(check_output_file(path, overwrite), content)


def check_and_calibration_texts(quantize, check_texts, representative_texts):
    """(check texts, calibration texts or None, report entries).

    Full int8 is checked on held-out texts only (see `int8_calibration`);
    the other modes on `check_texts` (default: two short sentences).
    """
    if quantize != "int8":
        check_texts = list(check_texts or DEFAULT_CHECK_TEXTS)
        return check_texts, None, {"check_texts": len(check_texts)}
    calibration, held_out, excluded = calibration_and_check_texts(representative_texts, check_texts)
    report = {
        "calibration_texts": len(calibration),
        "check_texts": len(held_out),
        "check_texts_excluded_as_calibration": excluded,
    }
    return held_out, calibration, report


def export_tflite(
    task,
    path,
    quantize="none",
    sequence_length=None,
    check_texts=None,
    representative_texts=None,
    overwrite=False,
    metadata=False,
):
    """Converts, checks and writes `path` (a .tflite file); returns the report.

    Full int8 (`quantize="int8"`) calibrates on `representative_texts` (at
    least 100; None: a bundled sample of 300 English texts) and measures
    argmax agreement only on the `check_texts` that are not calibration
    texts (at least 100 must remain; None: 200 bundled held-out glosses).
    Other modes are checked on `check_texts` (None: two short sentences).
    The report gives what was measured, on how many texts, and the file's
    size. An existing `path` is replaced only if it is a TFLite model, or
    with `overwrite=True`. `metadata=True` (classifiers with `label_names`)
    writes standard TFLite metadata, for MediaPipe's `TextClassifier` and
    other runtimes; the output is then `probabilities` (see
    `tflite_metadata`).
    """
    # Conversion traces the Keras model into a TensorFlow graph.
    require_tensorflow("TFLite export", backend_too=True)
    check_quantize(quantize)
    task = metadata_outputs(task, metadata)
    if not task.built or getattr(task, "preprocessor", None) is None:
        raise ValueError("Export needs a built task with a preprocessor (for tokenizing check texts).")
    path = check_output_file(path, overwrite)
    sequence_length = check_sequence_length(task, sequence_length)
    check_texts, calibration, texts_report = check_and_calibration_texts(
        quantize, check_texts, representative_texts
    )
    representative = None
    if calibration is not None:
        representative = token_features(task, calibration, sequence_length)
    with logged_step(_logger, f"Converting to TFLite (quantize={quantize}, sequence_length={sequence_length})"):
        content = convert(task, sequence_length, quantize, representative)
    if metadata:
        with logged_step(_logger, "Adding TFLite metadata (labels, SentencePiece model)"):
            content = add_classifier_metadata(content, task, sequence_length)
    with logged_step(_logger, f"Checking the TFLite model against Keras on {len(check_texts)} texts"):
        report = verify(content, task, token_features(task, check_texts, sequence_length), quantize)
    with logged_step(_logger, f"Writing {str(path)!r}"):
        write_atomically(path, content, overwrite)
    report.update(texts_report, path=str(path), bytes=len(content), sequence_length=sequence_length)
    if metadata:
        report["metadata"] = True
    return report
