"""Runs saved models on one Keras backend and writes what they compute.

Run by `tests/backends/test_backend_parity.py` in a fresh process per
backend (Keras picks its backend once per process):

    KERAS_BACKEND=jax python tests/backends/backend_worker.py CASES OUT.npz

CASES holds `inputs.npz` and, per case, `<name>.keras` (a model saved on
TensorFlow) and `<name>.json` (`{"kind": ...}`). With
KERAS_ALBERT_BLOCK_TENSORFLOW=1, TensorFlow cannot be imported, as on a
machine without it.
"""

import json
import os
import pathlib
import sys

if os.environ.get("KERAS_ALBERT_BLOCK_TENSORFLOW"):
    sys.modules["tensorflow"] = None
    sys.modules["tensorflow_text"] = None

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402, F401
from keras_albert.training.lamb import AlbertLamb  # noqa: E402

BACKEND = keras.config.backend()
FUSED_CALLS = []


def _count_fused_attention():
    """Counts calls of `keras.ops.dot_product_attention` (the fused path)."""
    real = keras.ops.dot_product_attention
    if getattr(real, "counted", False):
        return

    def counted(*args, **kwargs):
        FUSED_CALLS.append(1)
        return real(*args, **kwargs)

    counted.counted = True
    keras.ops.dot_product_attention = counted


def backbone_outputs(model, inputs):
    outputs = model(_backbone_inputs(inputs), training=False)
    return {name: outputs[name] for name in ("sequence_output", "pooled_output")}


def _backbone_inputs(inputs):
    return {name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")}


def pretrainer_outputs(model, inputs, optimizer):
    x = dict(_backbone_inputs(inputs), mask_positions=inputs["mask_positions"])
    y = {"mlm": inputs["mask_ids"], "sentence_order": inputs["sop_labels"]}
    sample_weight = {"mlm": inputs["mask_weights"], "sentence_order": np.ones_like(inputs["sop_labels"], "float32")}
    results = dict(model(x, training=False))
    if optimizer == "lamb":
        optimizer = AlbertLamb(learning_rate=0.01)
    else:
        optimizer = keras.optimizers.SGD(0.5)
    # XLA on every backend that has it is checked by the CPU runs of the
    # suite; here the step runs as each backend's default for a CPU.
    model.compile(optimizer=optimizer, jit_compile=BACKEND == "jax")
    # keras-hub's PipelineModel.train_on_batch cannot take dict labels;
    # the pretrainer has no preprocessor, so Keras's own step is the same.
    step = dict(sample_weight=sample_weight, return_dict=True)
    results["loss_before_step"] = keras.Model.train_on_batch(model, x, y, **step)["loss"]
    results["loss_after_step"] = keras.Model.test_on_batch(model, x, y, **step)["loss"]
    return results


def task_outputs(model, inputs):
    """Every output of a task model (no preprocessor) on packed inputs."""
    x = _backbone_inputs(inputs)
    if model.name.startswith("albert_multiple_choice"):
        x = {name: np.stack([value, value[:, ::-1]], axis=1) for name, value in x.items()}
    elif model.name.startswith("albert_masked_lm"):
        x = dict(x, mask_positions=inputs["mask_positions"])
    outputs = model(x, training=False)
    return outputs if isinstance(outputs, dict) else {"output": outputs}


def distiller_outputs(teacher, student, inputs):
    """Every distillation loss, then one SGD step's loss, of a Distiller."""
    from keras_albert.distill import Distiller

    distiller = Distiller(teacher, student, hidden_projection=False)
    x = dict(_backbone_inputs(inputs), mask_positions=inputs["mask_positions"])
    losses = distiller.distillation_losses(x, distiller(x), inputs["mask_ids"], inputs["mask_weights"])
    results = {f"loss_{name}": value for name, value in losses.items()}
    distiller.compile(optimizer=keras.optimizers.SGD(0.01), jit_compile=BACKEND == "jax")
    y, weights = {"mlm": inputs["mask_ids"]}, {"mlm": inputs["mask_weights"]}
    results["loss_before_step"] = distiller.train_on_batch(x, y, sample_weight=weights, return_dict=True)["loss"]
    results["loss_after_step"] = distiller.test_on_batch(x, y, sample_weight=weights, return_dict=True)["loss"]
    return results


def reversible_gradients(model, inputs):
    """Gradients of a loss on two layers' outputs, by reversal and by plain
    autodiff, with this backend's own autodiff."""
    encoder = model.encoder
    rng = np.random.default_rng(3)
    x = rng.normal(size=inputs["token_ids"].shape + (encoder.hidden_dim,)).astype("float32")
    target = rng.normal(size=x.shape).astype("float32")
    mask = inputs["padding_mask"]

    def loss_of(outputs):
        ops = keras.ops
        return ops.sum(outputs[-1] * ops.convert_to_tensor(target)) + ops.sum(outputs[0] ** 2)

    def run(reference):
        if reference:
            return lambda x: encoder.reference_outputs(x, mask)
        return lambda x: encoder(x, padding_mask=mask, training=True)

    results = {}
    for label, reference in (("reversal", False), ("autodiff", True)):
        grads = _gradients(encoder, run(reference), loss_of, x)
        for index, grad in enumerate(grads):
            results[f"{label}_{index}"] = grad
    return results


def _gradients(layer, forward, loss_of, x):
    """`[d loss / d x] + [d loss / d w for w in layer.trainable_variables]`."""
    variables = layer.trainable_variables
    if BACKEND == "tensorflow":
        import tensorflow as tf

        x = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = loss_of(forward(x))
        return tape.gradient(loss, [x] + [v.value for v in variables])
    if BACKEND == "jax":
        import jax

        def loss_fn(x, values):
            mapping = list(zip(layer.variables, values))
            with keras.StatelessScope(state_mapping=mapping):
                return loss_of(forward(x))

        values = [v.value for v in layer.variables]
        dx, dvalues = jax.grad(loss_fn, argnums=(0, 1))(x, values)
        by_id = {id(v): g for v, g in zip(layer.variables, dvalues)}
        return [dx] + [by_id[id(v)] for v in variables]
    import torch

    x = torch.tensor(x, requires_grad=True)
    loss = loss_of(forward(x))
    return torch.autograd.grad(loss, [x] + [v.value for v in variables])


def main(cases_dir, out_path):
    _count_fused_attention()
    cases_dir = pathlib.Path(cases_dir)
    inputs = dict(np.load(cases_dir / "inputs.npz"))
    results = {}
    for spec_path in sorted(cases_dir.glob("*.json")):
        name = spec_path.stem
        spec = json.loads(spec_path.read_text())
        if spec["kind"] == "distiller":
            teacher, student = (
                keras.saving.load_model(cases_dir / f"{name}_{role}.keras", compile=False)
                for role in ("teacher", "student")
            )
            outputs = distiller_outputs(teacher, student, inputs)
            for key, value in outputs.items():
                results[f"{name}/{key}"] = keras.ops.convert_to_numpy(value).astype("float32")
            continue
        model = keras.saving.load_model(cases_dir / f"{name}.keras", compile=False)
        if spec["kind"] == "task":
            outputs = task_outputs(model, inputs)
        elif spec["kind"] == "backbone":
            outputs = backbone_outputs(model, inputs)
        elif spec["kind"] == "pretrainer":
            outputs = pretrainer_outputs(model, inputs, spec.get("optimizer", "sgd"))
        elif spec["kind"] == "reversible_gradients":
            outputs = reversible_gradients(model, inputs)
        else:
            raise ValueError(f"Unknown case kind: {spec['kind']!r}")
        for key, value in outputs.items():
            results[f"{name}/{key}"] = keras.ops.convert_to_numpy(value).astype("float32")
    results["fused_attention_calls"] = np.array(len(FUSED_CALLS), "float32")
    np.savez(out_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
