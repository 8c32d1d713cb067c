"""Gradients and traced runs with the running backend's own tools.

For checks of layers on every backend: what the TensorFlow-only tests did
with `tf.GradientTape` and `tf.function`, written once per backend. Modes:

- "eager": op by op (TensorFlow's eager mode, JAX without `jax.jit`,
  PyTorch).
- "graph": a `tf.function` without XLA (TensorFlow only).
- "xla": compiled by XLA: `tf.function(jit_compile=True)` on TensorFlow,
  `jax.jit` on JAX. Keras has no XLA on PyTorch.
"""

import keras
import numpy as np

BACKEND = keras.config.backend()
# Each backend's eager run and its traced one (PyTorch has none here).
TRACED_MODE = {"tensorflow": "graph", "jax": "xla"}.get(BACKEND)
EAGER_AND_TRACED = ["eager"] + ([TRACED_MODE] if TRACED_MODE else [])
# XLA compiles on TensorFlow and JAX; PyTorch has no XLA in Keras.
JIT_CHOICES = [False, True] if BACKEND in ("tensorflow", "jax") else [False]


def jit_mode(jit_compile):
    """The mode for a `jit_compile` choice: XLA, or the backend's run
    without it (a plain `tf.function` on TensorFlow, as Keras's own
    `jit_compile=False` step)."""
    if jit_compile:
        return "xla"
    return "graph" if BACKEND == "tensorflow" else "eager"


def _check_mode(mode):
    allowed = {"tensorflow": ("eager", "graph", "xla"), "jax": ("eager", "xla")}.get(BACKEND, ("eager",))
    if mode not in allowed:
        raise ValueError(f"mode={mode!r} does not run on {BACKEND}; it runs {allowed}.")


def _numpy(value):
    if value is None:
        return None
    if BACKEND == "torch":
        return value.detach().cpu().numpy()
    if BACKEND == "tensorflow":
        import tensorflow as tf

        return tf.convert_to_tensor(value).numpy()  # IndexedSlices too
    return np.asarray(keras.ops.convert_to_numpy(value))


def run(function, *arrays, mode="eager"):
    """`function(*arrays)` (backend tensors in, a nest of tensors out) in
    `mode`, as a nest of NumPy arrays."""
    _check_mode(mode)
    if BACKEND == "tensorflow" and mode != "eager":
        import tensorflow as tf

        outputs = tf.function(function, jit_compile=mode == "xla")(*arrays)
    elif mode == "xla":
        import jax

        outputs = jax.jit(function)(*arrays)
    else:
        outputs = function(*(keras.ops.convert_to_tensor(a) for a in arrays))
    return keras.tree.map_structure(_numpy, outputs)


def loss_and_gradients(layer, loss_of, x, mode="eager"):
    """`[loss, d loss / d x] + [d loss / d w for w in layer.trainable_variables]`
    as NumPy (None where a weight gets no gradient).

    `loss_of(x)` calls `layer` (any number of times) on the float input `x`
    (a NumPy array) and returns a scalar.
    """
    _check_mode(mode)
    x = np.asarray(x)
    if not layer.built:
        loss_of(keras.ops.convert_to_tensor(x))  # creates the weights
    variables = layer.trainable_variables
    if BACKEND == "tensorflow":
        import tensorflow as tf

        def compute(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = loss_of(x)
            return [loss] + tape.gradient(loss, [x] + [v.value for v in variables])

        if mode != "eager":
            compute = tf.function(compute, jit_compile=mode == "xla")
        return [_numpy(value) for value in compute(tf.constant(x))]
    if BACKEND == "jax":
        import jax

        # Variables enter as arguments (a traced function may not read them
        # as state): each call maps them, as Keras's `stateless_call` does.
        # Only the trainable ones are differentiated (a seed is an integer).
        others = [v for v in layer.variables if not v.trainable]

        def loss_fn(x, values, other_values):
            mapping = list(zip(variables, values)) + list(zip(others, other_values))
            with keras.StatelessScope(state_mapping=mapping):
                return loss_of(x)

        compute = jax.value_and_grad(loss_fn, argnums=(0, 1))
        if mode == "xla":
            compute = jax.jit(compute)
        loss, (dx, dvalues) = compute(x, [v.value for v in variables], [v.value for v in others])
        return [_numpy(loss), _numpy(dx)] + [_numpy(g) for g in dvalues]
    import torch

    x = torch.tensor(x, requires_grad=True)
    loss = loss_of(x)
    grads = torch.autograd.grad(loss, [x] + [v.value for v in variables], allow_unused=True)
    return [_numpy(loss)] + [_numpy(g) for g in grads]
