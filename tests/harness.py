"""Shared checks for layers, backbones, tasks and presets.

In the spirit of keras-hub's ``TestCase`` (``run_layer_test``,
``run_backbone_test``, ``run_task_test``, ``run_preset_test``) but written
for this package's pytest-style tests: plain functions that raise
``AssertionError`` and return what they built, so a test can go on to
check what is particular to it.

Conventions: ``input_data`` is either one array (the layer is called as
``layer(x)``) or a dict of arrays (called as ``layer(**input_data)``; a
backbone or task takes the dict itself). ``expected_output_shape`` is a
tuple, or the same nest as the outputs (a dict or list of tuples).

The "dataset" legs use ``tf.data`` where TensorFlow is installed and a
grain dataset of the same batches where it is not (the device machines
run these checks on JAX with no TensorFlow).
"""

import json

import keras
import numpy as np
from keras import ops
from keras import tree

MIXED_POLICIES = ("mixed_float16", "mixed_bfloat16")


def _tensorflow():
    try:
        import tensorflow as tf
    except ImportError:
        return None
    return tf


def _as_arrays(data):
    """Lists (of strings, say) become arrays, so batches slice them whole."""
    if isinstance(data, dict):
        return {key: _as_arrays(value) for key, value in data.items()}
    if isinstance(data, tuple):
        return tuple(_as_arrays(value) for value in data)
    return np.asarray(data)


def _batched(data, batch_size, transform=None):
    """`data` in batches of `batch_size`, each through `transform`: a
    tf.data pipeline where TensorFlow is installed, else a grain dataset
    (what keras-hub's tasks accept without TensorFlow)."""
    tf = _tensorflow()
    if tf is not None:
        dataset = tf.data.Dataset.from_tensor_slices(data).batch(batch_size)
        return dataset if transform is None else dataset.map(transform)
    import grain

    data = _as_arrays(data)
    rows = [tree.map_structure(lambda array: array[i], data) for i in range(len(tree.flatten(data)[0]))]
    dataset = grain.MapDataset.source(rows).batch(batch_size)
    if transform is None:
        return dataset
    return dataset.map(lambda batch: transform(*batch) if isinstance(batch, tuple) else transform(batch))


def _call(layer, input_data, **kwargs):
    if isinstance(input_data, dict) and not isinstance(layer, keras.Model):
        return layer(**input_data, **kwargs)
    return layer(input_data, **kwargs)


def _shapes(outputs):
    return tree.map_structure(lambda t: tuple(t.shape), outputs)


def _numpy(outputs):
    return tree.map_structure(
        lambda t: np.asarray(ops.convert_to_numpy(ops.cast(t, "float32"))), outputs
    )


def _is_float(dtype):
    return "float" in keras.backend.standardize_dtype(dtype)


def assert_same_outputs(actual, expected, atol=1e-6):
    """Both nests have one structure and close values."""
    tree.assert_same_structure(actual, expected)
    for a, b in zip(tree.flatten(_numpy(actual)), tree.flatten(_numpy(expected))):
        np.testing.assert_allclose(a, b, atol=atol)


def _config_json(instance):
    return json.dumps(instance.get_config(), sort_keys=True, default=str)


def run_serialization_test(instance, registered_prefix="keras_albert>"):
    """get_config/from_config and serialize/deserialize are lossless.

    Returns the instance rebuilt from its serialized (JSON) form.
    """
    cls = type(instance)
    config = _config_json(instance)
    clone = cls.from_config(json.loads(json.dumps(instance.get_config(), default=str)))
    assert type(clone) is cls
    assert _config_json(clone) == config, "get_config/from_config round trip changed the config"

    serialized = json.dumps(keras.saving.serialize_keras_object(instance), default=str)
    payload = json.loads(serialized)
    if registered_prefix is not None:
        assert payload["registered_name"].startswith(registered_prefix), payload["registered_name"]
    revived = keras.saving.deserialize_keras_object(payload)
    assert type(revived) is cls
    assert _config_json(revived) == config, "serialize/deserialize round trip changed the config"
    return revived


def _assert_policy(layer, outputs, policy):
    for tensor in tree.flatten(outputs):
        if _is_float(tensor.dtype):
            assert keras.backend.standardize_dtype(tensor.dtype) == policy.compute_dtype, (
                f"{policy.name}: an output is {tensor.dtype}"
            )
    for weight in layer.weights:
        if _is_float(weight.dtype):
            assert keras.backend.standardize_dtype(weight.dtype) == policy.variable_dtype, (
                f"{policy.name}: weight {weight.path} is {weight.dtype}"
            )
    for value in tree.flatten(_numpy(outputs)):
        assert np.isfinite(value).all(), f"{policy.name}: non-finite outputs"


def run_precision_test(cls, init_kwargs, input_data, policies=MIXED_POLICIES):
    """Under each mixed policy, float outputs are in the compute dtype,
    float weights in the variable dtype, and everything is finite."""
    for name in policies:
        policy = keras.dtype_policies.get(name)
        layer = cls(**{**init_kwargs, "dtype": policy})
        _assert_policy(layer, _call(layer, input_data), policy)


def _train_one_step(layer, input_data, targets):
    """Fit one batch towards `targets`; returns the weights before and after."""

    class Wrapper(keras.Model):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def call(self, x):
            return _call(self.inner, x)

    model = Wrapper(layer)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = [ops.convert_to_numpy(w).copy() for w in layer.trainable_weights]
    history = model.fit(input_data, targets, batch_size=len(tree.flatten(targets)[0]), verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    return before, [ops.convert_to_numpy(w).copy() for w in layer.trainable_weights]


def run_layer_test(
    cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    expected_num_trainable_weights=None,
    run_training_check=True,
    run_precision_check=True,
    atol=1e-6,
):
    """Build, call, round-trip and (where it has weights) train a layer.

    Checks: serialization round trips (config and registry); a symbolic
    call on ``KerasTensor`` inputs and an eager call both give
    ``expected_output_shape`` in the layer's compute dtype; a clone from
    ``get_config`` given the same weights gives the same outputs; one
    training step changes the trainable weights; mixed precision. Returns
    the eagerly called layer.
    """
    run_serialization_test(cls(**init_kwargs))

    symbolic_inputs = tree.map_structure(
        lambda x: keras.KerasTensor(x.shape, keras.backend.standardize_dtype(x.dtype)),
        input_data,
    )
    symbolic = _call(cls(**init_kwargs), symbolic_inputs)
    assert _shapes(symbolic) == expected_output_shape, "symbolic output shape"

    layer = cls(**init_kwargs)
    outputs = _call(layer, input_data)
    assert layer.built
    assert _shapes(outputs) == expected_output_shape, "eager output shape"
    for tensor in tree.flatten(outputs):
        if _is_float(tensor.dtype):
            assert keras.backend.standardize_dtype(tensor.dtype) == layer.compute_dtype
    if expected_num_trainable_weights is not None:
        assert len(layer.trainable_weights) == expected_num_trainable_weights

    clone = cls.from_config(layer.get_config())
    _call(clone, input_data)
    clone.set_weights(layer.get_weights())
    assert_same_outputs(_call(clone, input_data), outputs, atol=atol)

    if run_training_check and layer.trainable_weights:
        targets = tree.map_structure(lambda t: np.zeros(t.shape, "float32"), _numpy(outputs))
        before, after = _train_one_step(layer, input_data, targets)
        assert any(not np.array_equal(b, a) for b, a in zip(before, after)), (
            "a training step changed no trainable weight"
        )

    if run_precision_check:
        run_precision_test(cls, init_kwargs, input_data)
    return layer


def run_backbone_test(
    cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    sequence_lengths=(2, 3, 4),
    run_precision_check=True,
    atol=1e-6,
):
    """A backbone's shapes, predict paths, variable lengths and round trips.

    Checks: serialization; eager outputs have ``expected_output_shape``;
    shorter sequences (``sequence_lengths``) run; ``predict`` on arrays and
    on a ``tf.data`` pipeline agree with the eager call; a ``from_config``
    clone with the same weights gives the same outputs; the model name
    follows the class name; mixed precision. Returns the backbone.
    """
    backbone = cls(**init_kwargs)
    run_serialization_test(backbone)
    outputs = backbone(input_data)
    assert _shapes(outputs) == expected_output_shape

    for length in sequence_lengths:
        backbone(tree.map_structure(lambda x: x[:, :length], input_data))

    predicted = backbone.predict(input_data, verbose=0)
    assert_same_outputs(predicted, outputs, atol=1e-5)
    dataset = _batched(input_data, 2)
    assert_same_outputs(backbone.predict(dataset, verbose=0), predicted, atol=1e-5)

    clone = cls.from_config(backbone.get_config())
    clone.set_weights(backbone.get_weights())
    assert_same_outputs(clone(input_data), outputs, atol=atol)

    snake = "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")
    assert snake in backbone.name, (snake, backbone.name)

    if run_precision_check:
        run_precision_test(cls, init_kwargs, input_data)
    return backbone


def run_task_test(
    cls,
    init_kwargs,
    train_data,
    expected_output_shape,
    batch_size=2,
    compile_kwargs=None,
    atol=1e-5,
):
    """A task predicts and fits on arrays, datasets and split preprocessing.

    ``train_data`` is ``(x, y)`` or ``(x, y, sample_weight)``. Checks:
    serialization; ``predict`` has ``expected_output_shape`` and agrees on
    arrays, a ``tf.data`` pipeline and (with a preprocessor) preprocessing
    split out of the model; ``fit`` gives a finite loss on arrays and on a
    dataset; a task built with ``compile=False`` refuses to fit. Returns
    the task.
    """
    task = cls(**init_kwargs)
    task.compile(**(compile_kwargs or {}))
    run_serialization_test(task)
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(train_data)
    dataset = _batched(train_data, batch_size)

    output = task.predict(x, batch_size=batch_size, verbose=0)
    assert _shapes(output) == expected_output_shape
    assert_same_outputs(task.predict(dataset, verbose=0), output, atol=atol)
    preprocessor = task.preprocessor
    if preprocessor is not None:
        task.preprocessor = None
        try:
            split = task.predict(_batched(train_data, batch_size, preprocessor), verbose=0)
        finally:
            task.preprocessor = preprocessor
        assert_same_outputs(split, output, atol=atol)

    for history in (
        task.fit(x, y, sample_weight=sample_weight, batch_size=batch_size, verbose=0),
        task.fit(dataset, verbose=0),
    ):
        assert np.isfinite(history.history["loss"]).all()

    uncompiled = cls(**init_kwargs, compile=False)
    try:
        uncompiled.fit(dataset, verbose=0)
    except ValueError as error:
        assert "compile" in str(error)
    else:
        raise AssertionError("fit() without compile() did not fail")
    return task


def run_preset_round_trip(instance, directory, input_data, cls=None, atol=1e-6, **load_kwargs):
    """``save_to_preset`` then ``from_preset`` gives the same object back.

    Checks the class, the config (for models) and the outputs on
    ``input_data`` (``cls.from_preset`` defaults to the instance's class).
    Returns the restored object.
    """
    cls = cls or type(instance)
    directory = str(directory)
    instance.save_to_preset(directory)
    restored = cls.from_preset(directory, **load_kwargs)
    assert isinstance(restored, cls), type(restored)
    if isinstance(instance, keras.Model) and not getattr(instance, "preprocessor", None):
        assert restored.get_config() == instance.get_config()
    assert_same_outputs(_call(restored, input_data), _call(instance, input_data), atol=atol)
    return restored
