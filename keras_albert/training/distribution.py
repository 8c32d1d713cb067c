"""Keras 3's distribution API for ALBERT on JAX: data and model parallel.

`keras.distribution` shards variables and batches over a device mesh
inside the compiled JAX step; it does nothing on TensorFlow (use
`resolve_strategy`, tf.distribute, there). The layout map splits ALBERT's
matrices Megatron-style over the mesh's `model` axis: attention's query,
key, value and the first feed-forward matrix by output columns, their
output projections by input rows, the vocabulary by rows. A shared block's
weights are one variable each, so they are laid out once, however many
layers use them.
"""

import keras

from keras_albert.utils.validation import check_positive_int

# Variable-path patterns -> the layout of the variable's axes. LayoutMap
# matches a path in full (`re.fullmatch`): hence the leading `.*`.
_MODEL_PARALLEL_LAYOUT = (
    (r".*self_attention/(query|key|value)/kernel", (None, "model")),
    (r".*self_attention/(query|key|value)/bias", ("model",)),
    (r".*self_attention/output_dense/kernel", ("model", None)),
    (r".*feed_forward/intermediate_dense/kernel", (None, "model")),
    (r".*feed_forward/intermediate_dense/bias", ("model",)),
    (r".*feed_forward/output_dense/kernel", ("model", None)),
    (r".*token_embedding/embeddings", ("model", None)),
    (r".*masked_lm_head/output_bias", ("model",)),
)


def _check_jax(what):
    backend = keras.config.backend()
    if backend != "jax":
        raise ValueError(
            f"{what} uses keras.distribution, which shards on "
            f"KERAS_BACKEND=jax only; this process runs KERAS_BACKEND={backend} "
            "(on TensorFlow use resolve_strategy / --strategy, tf.distribute)."
        )


def albert_layout_map(device_mesh):
    """A `keras.distribution.LayoutMap` for ALBERT on `device_mesh` (axes
    named `batch` and `model`); variables it does not name are replicated."""
    if not isinstance(device_mesh, keras.distribution.DeviceMesh):
        raise ValueError(
            "`device_mesh` must be a keras.distribution.DeviceMesh. "
            f"Received: device_mesh={device_mesh!r}"
        )
    if tuple(device_mesh.axis_names) != ("batch", "model"):
        raise ValueError(
            "`device_mesh` must have the axes ('batch', 'model'). Received: "
            f"axis_names={tuple(device_mesh.axis_names)}"
        )
    layout_map = keras.distribution.LayoutMap(device_mesh)
    for pattern, axes in _MODEL_PARALLEL_LAYOUT:
        layout_map[pattern] = axes
    return layout_map


def albert_model_parallel(model_parallel, devices=None):
    """`keras.distribution.ModelParallel` over `devices` (default: all),
    `model_parallel` devices per model replica, the rest data parallel.

    Set it before building the model:
    `keras.distribution.set_distribution(albert_model_parallel(2))`.
    """
    _check_jax("albert_model_parallel")
    check_positive_int("model_parallel", model_parallel)
    devices = list(devices or keras.distribution.list_devices())
    if len(devices) % model_parallel:
        raise ValueError(
            f"`model_parallel` must divide the number of devices ({len(devices)}). "
            f"Received: model_parallel={model_parallel}"
        )
    mesh = keras.distribution.DeviceMesh(
        (len(devices) // model_parallel, model_parallel), ("batch", "model"), devices
    )
    return keras.distribution.ModelParallel(
        layout_map=albert_layout_map(mesh), batch_dim_name="batch"
    )


def albert_data_parallel(devices=None):
    """`keras.distribution.DataParallel` over `devices` (default: all)."""
    _check_jax("albert_data_parallel")
    return keras.distribution.DataParallel(devices=devices)
