"""LSH self-attention traced into TensorFlow graphs: a `tf.function` with
unknown batch and length, and a TFLite file of built-in ops only.

TensorFlow only, on the TensorFlow backend (both trace the Keras layer into
a TensorFlow graph, as the library's export does); the layer itself is
checked on every backend in test_lsh_attention.py.
"""

import keras
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="tf.function graphs and TFLite are TensorFlow's")
if keras.config.backend() != "tensorflow":
    pytest.skip(
        "tf.function and TFLite trace the layer as TensorFlow ops: KERAS_BACKEND=tensorflow",
        allow_module_level=True,
    )

from tests.layers.test_lsh_attention import HIDDEN  # noqa: E402
from tests.layers.test_lsh_attention import _inputs  # noqa: E402
from tests.layers.test_lsh_attention import _layer  # noqa: E402


def test_traces_with_unknown_batch_and_length():
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2, num_chunks_after=1)
    x, mask = _inputs(length=10)
    eager = layer(x, padding_mask=mask).numpy()
    # Keras traces functional models with unknown batch and length.
    dynamic = tf.function(
        lambda a, m: layer(a, padding_mask=m),
        input_signature=[
            tf.TensorSpec([None, None, HIDDEN]),
            tf.TensorSpec([None, None], tf.int32),
        ],
    )(x, mask)
    np.testing.assert_allclose(dynamic.numpy(), eager, atol=1e-5)


def _run_tflite(content, inputs):
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        Interpreter = tf.lite.Interpreter
    interpreter = Interpreter(model_content=content)
    interpreter.allocate_tensors()
    op_names = {op["op_name"] for op in interpreter._get_ops_details()}
    return interpreter.get_signature_runner()(**inputs), op_names


def test_converts_to_tflite_builtins_and_matches():
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2)
    x, mask = _inputs(length=10)
    expected = layer(x, padding_mask=mask).numpy()

    module = tf.Module()
    module.vars = [v.value for v in layer.variables]
    module.serve = tf.function(
        lambda hidden, padding_mask: {"out": layer(hidden, padding_mask=padding_mask)},
        input_signature=[
            tf.TensorSpec(x.shape, tf.float32, name="hidden"),
            tf.TensorSpec(mask.shape, tf.int32, name="padding_mask"),
        ],
    )
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [module.serve.get_concrete_function()], module
    )
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    content = converter.convert()
    outputs, op_names = _run_tflite(content, {"hidden": x, "padding_mask": mask})
    # The bucket sort runs as TFLite's own TopK.
    assert "TOPK_V2" in op_names and not any("Flex" in n for n in op_names)
    out = outputs["out"]
    np.testing.assert_allclose(out, expected, atol=1e-4)
