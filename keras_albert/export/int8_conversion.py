"""Full int8 TFLite that keeps the Keras model's argmax: int8 where the weights are.

Quantizing every op of an ALBERT graph to int8 spreads rounding error over
hundreds of small ops (each LayerNorm alone is about ten: mean, squared
difference, rsqrt, ...) and rounds the logits themselves to steps of a few
hundredths, enough to flip near-tied classes. Measured on the bundled
supersense student (`benchmarks/int8_agreement.py`): no single layer is to
blame, so denylisting a few worst nodes does not help, while keeping
float every op but the dense layers and embedding lookups halves the
logit error and is faster on CPU: the int8 versions of LayerNorm's and
attention's ops run slower here than their float ones (a single text on
one thread: 1.0 ms with every op in int8, 0.29 ms this way, 0.32 ms for
dynamic-range int8; `benchmarks/results/int8_agreement.json`).

So the file keeps int8 weights and int8 activations in every dense layer
(`FULLY_CONNECTED`) and int8 embedding tables (`GATHER`); everything
between them, and the output layer(s), run in float. It is built with
TensorFlow's quantization debugger, which re-quantizes the calibrated model
with a denylist, so it uses the converter's own calibration and kernels.
Not for integer-only accelerators: those need every op in int8.
"""

import warnings

import tensorflow as tf

# The ops that hold the weights and do the matrix work.
INT8_OPS = ("FULLY_CONNECTED", "GATHER")
# Inserted by the quantizer itself, never denylisted.
_QUANTIZER_OPS = ("QUANTIZE", "DEQUANTIZE")


def _ops_and_output_layers(calibrated_model):
    """Op names in a calibrated (still float) model, and the output tensors
    of its output layers: every `INT8_OPS` op an output is computed from
    with no other `INT8_OPS` op in between, or the output itself where none
    is. A classifier exported with metadata ends in a softmax: its logits
    layer must stay float too, or int8 rounding of the logits ties
    near-equal classes (measured: 98.5 % argmax agreement instead of 99.5 %
    on the bundled supersense student)."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=calibrated_model)
    # The same (private) listing TensorFlow's debugger reads its model with.
    details = interpreter._get_ops_details()
    names = {t["index"]: t["name"] for t in interpreter.get_tensor_details()}
    producers = {out: op for op in details for out in op["outputs"]}
    outputs = [detail["index"] for detail in interpreter.get_output_details()]
    layers, seen, pending = set(), set(), list(outputs)
    while pending:
        tensor = pending.pop()
        op = producers.get(tensor)
        if tensor in seen or op is None:
            continue
        seen.add(tensor)
        if op["op_name"] in INT8_OPS:
            layers.add(names[tensor])
        else:
            pending.extend(i for i in op["inputs"] if i >= 0)
    layers.update(names[index] for index in outputs)
    return {op["op_name"] for op in details}, sorted(layers)


def float_ops_and_nodes(calibrated_model):
    """What stays float: every op type but `INT8_OPS`, and the output layers."""
    ops, output_layers = _ops_and_output_layers(calibrated_model)
    return sorted(ops - set(INT8_OPS) - set(_QUANTIZER_OPS)), output_layers


def convert_int8(converter):
    """Flatbuffer bytes from `converter`, set up for full int8 (optimizations
    and a representative dataset, see `tflite_export.set_quantization`),
    calibrated once and quantized as this module's docstring says."""
    with warnings.catch_warnings():
        # TensorFlow's debugger runs the interpreter it deprecates itself.
        warnings.filterwarnings("ignore", message=r"\s*Warning: tf\.lite\.Interpreter is deprecated")
        debugger = tf.lite.experimental.QuantizationDebugger(converter=converter)
        ops, nodes = float_ops_and_nodes(debugger.calibrated_model)
        debugger.options = tf.lite.experimental.QuantizationDebugOptions(
            denylisted_ops=ops, denylisted_nodes=nodes
        )
        return debugger.get_nondebug_quantized_model()


def op_precisions(content):
    """{op name: {"int8": count, "float32": count}} for a TFLite file.

    An op counts as int8 or float32 by the type of its first input (for a
    dense layer, its activations; its weights follow); ops on integer ids,
    masks or strings are left out. Tells what runs in int8 in a file.
    """
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=content)
    dtypes = {t["index"]: t["dtype"].__name__ for t in interpreter.get_tensor_details()}
    counts = {}
    for op in interpreter._get_ops_details():
        inputs = [i for i in op["inputs"] if i >= 0]
        kind = dtypes.get(inputs[0]) if inputs else None
        if kind in ("int8", "float32"):
            entry = counts.setdefault(op["op_name"], {"int8": 0, "float32": 0})
            entry[kind] += 1
    return counts
