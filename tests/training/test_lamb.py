"""AlbertLamb against a NumPy transcription of google-research/albert's LAMB.

Runs on every backend: the XLA-compiled step on TensorFlow and JAX;
`tf.IndexedSlices` and MirroredStrategy in a TensorFlow process:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/training/test_lamb.py
"""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from keras_albert.training import AlbertLamb
from keras_albert.training import WarmupLinearDecay


def _model(dtype=None):
    # Names give the paths the exclusions see: ".../dense/kernel",
    # ".../layer_norm/gamma", ".../bias". "zero" starts at w = 0 (ratio 1).
    return keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(5, name="dense", dtype=dtype),
            keras.layers.LayerNormalization(name="layer_norm", dtype=dtype),
            keras.layers.Dense(
                3, name="zero", kernel_initializer="zeros", dtype=dtype
            ),
            keras.layers.Dense(2, name="out", bias_initializer="ones", dtype=dtype),
        ]
    )


def _numpy_lamb(weights, gradient_steps, learning_rates, decay, adapt, weight_decay_rate):
    """google-research/albert's optimization.py + lamb_optimizer.py, float64."""
    beta_1, beta_2, epsilon, clip_norm = 0.9, 0.999, 1e-6, 1.0
    weights = [w.astype(np.float64) for w in weights]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    history = []
    for grads, lr in zip(gradient_steps, learning_rates):
        grads = [g.astype(np.float64) for g in grads]
        global_norm = np.sqrt(sum(np.sum(g**2) for g in grads))
        grads = [g * clip_norm / max(global_norm, clip_norm) for g in grads]
        for i, g in enumerate(grads):
            m[i] = beta_1 * m[i] + (1 - beta_1) * g
            v[i] = beta_2 * v[i] + (1 - beta_2) * g**2
            update = m[i] / (np.sqrt(v[i]) + epsilon)
            if decay[i]:
                update = update + weight_decay_rate * weights[i]
            ratio = 1.0
            if adapt[i]:
                w_norm = np.linalg.norm(weights[i])
                u_norm = np.linalg.norm(update)
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
            weights[i] = weights[i] - ratio * lr * update
        history.append([w.copy() for w in weights])
    return history


def _compiled(optimizer, variables):
    """One XLA-compiled LAMB step, as this backend compiles one: TensorFlow
    through `tf.function(jit_compile=True)`, JAX through `jax.jit` of the
    stateless step `fit` takes there."""
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        return tf.function(lambda grads: optimizer.apply_gradients(zip(grads, variables)), jit_compile=True)
    import jax

    optimizer.build(variables)
    stateless = jax.jit(optimizer.stateless_apply)

    def step(grads):
        trained, state = stateless([v.value for v in optimizer.variables], grads, [v.value for v in variables])
        for variable, value in zip(variables, trained):
            variable.assign(value)
        for variable, value in zip(optimizer.variables, state):
            variable.assign(value)

    return step


# XLA compiles LAMB's step on TensorFlow and JAX; PyTorch has no XLA in Keras.
JIT_CHOICES = [False, True] if keras.config.backend() in ("tensorflow", "jax") else [False]


def _reference_schedule(step, peak, warmup, total):
    if step < warmup:
        return peak * step / warmup
    return peak * (1 - min(step, total) / total)


@pytest.mark.parametrize("jit_compile", JIT_CHOICES)
def test_steps_match_numpy_reference(jit_compile):
    keras.utils.set_random_seed(0)
    model = _model()
    variables = model.trainable_variables
    rng = np.random.default_rng(0)
    # Global norms well above and below the clip norm of 1.0.
    scales = [4.0, 0.05, 2.5, 0.01, 1.5, 0.3]
    gradient_steps = [
        [s * rng.standard_normal(v.shape).astype("float32") for v in variables]
        for s in scales
    ]
    gradient_steps[1][0][:] = 0.0  # A step with no gradient for one kernel.
    peak, warmup, total = 0.05, 2, 5
    optimizer = AlbertLamb(
        WarmupLinearDecay(peak, warmup, total), weight_decay_rate=0.1
    )

    def step(grads):
        optimizer.apply_gradients(zip(grads, variables))

    if jit_compile:
        step = _compiled(optimizer, variables)

    initial = [v.numpy() for v in variables]
    decay = [optimizer.uses_weight_decay(v) for v in variables]
    adapt = [optimizer.uses_layer_adaptation(v) for v in variables]
    assert decay == adapt == [True, False, False, False, True, False, True, False]

    learning_rates = [_reference_schedule(s, peak, warmup, total) for s in range(6)]
    expected = _numpy_lamb(
        initial, gradient_steps, learning_rates, decay, adapt, 0.1
    )
    for grads, want in zip(gradient_steps, expected):
        step([keras.ops.convert_to_tensor(g) for g in grads])
        for variable, w in zip(variables, want):
            np.testing.assert_allclose(
                variable.numpy(), w, rtol=0, atol=1e-6, err_msg=variable.path
            )
    # The reference moved every variable (so the comparison means something).
    for variable, w0 in zip(variables, initial):
        assert np.abs(variable.numpy() - w0).max() > 1e-3, variable.path


def test_excluded_variables_get_no_decay_and_no_trust_ratio():
    keras.utils.set_random_seed(1)
    model = _model()
    variables = model.trainable_variables
    lr, rate = 0.1, 0.5
    optimizer = AlbertLamb(lr, weight_decay_rate=rate, global_clipnorm=None)
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(v.shape).astype("float32") for v in variables]
    before = [v.numpy().astype(np.float64) for v in variables]
    optimizer.apply_gradients(zip([keras.ops.convert_to_tensor(g) for g in grads], variables))

    for variable, g, w in zip(variables, grads, before):
        delta = variable.numpy() - w
        adam = 0.1 * g / (np.sqrt(0.001 * g.astype(np.float64) ** 2) + 1e-6)
        if variable.path.endswith(("bias", "gamma", "beta")):
            # Plain Adam direction, unscaled: no decay, no trust ratio.
            np.testing.assert_allclose(delta, -lr * adam, rtol=1e-5, atol=1e-7)
        elif np.linalg.norm(w) > 0:
            # Trust ratio makes the step exactly lr * ||w|| long, along the
            # decayed update.
            update = adam + rate * w
            np.testing.assert_allclose(
                np.linalg.norm(delta), lr * np.linalg.norm(w), rtol=1e-5
            )
            np.testing.assert_allclose(
                delta, -lr * np.linalg.norm(w) / np.linalg.norm(update) * update,
                rtol=1e-5, atol=1e-7,
            )
        else:
            # w = 0: ratio 1, and decay of a zero weight is zero.
            np.testing.assert_allclose(delta, -lr * adam, rtol=1e-5, atol=1e-7)


def test_separate_exclusion_lists():
    model = _model()
    optimizer = AlbertLamb(
        exclude_from_weight_decay=["bias"], exclude_from_layer_adaptation=["gamma"]
    )
    flags = {
        v.path.split("/", 1)[1]: (
            optimizer.uses_weight_decay(v),
            optimizer.uses_layer_adaptation(v),
        )
        for v in model.trainable_variables
    }
    assert flags["dense/bias"] == (False, True)
    assert flags["layer_norm/gamma"] == (True, False)
    assert flags["layer_norm/beta"] == (True, True)
    assert flags["dense/kernel"] == (True, True)
    assert not AlbertLamb(weight_decay_rate=0.0).uses_weight_decay(
        model.trainable_variables[0]
    )


def test_default_exclusions_cover_the_albert_backbone(tiny_backbone_config):
    from keras_albert import AlbertBackbone

    backbone = AlbertBackbone(**tiny_backbone_config)
    optimizer = AlbertLamb()
    for variable in backbone.trainable_variables:
        excluded = variable.path.endswith(("gamma", "beta", "bias"))
        assert optimizer.uses_weight_decay(variable) is not excluded, variable.path
        assert optimizer.uses_layer_adaptation(variable) is not excluded
    decayed = [
        v.path for v in backbone.trainable_variables if optimizer.uses_weight_decay(v)
    ]
    assert any("embeddings" in path for path in decayed)
    assert any("layer_norm" in v.path for v in backbone.trainable_variables)


_SPARSE_SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    import tensorflow as tf
    import keras
    from keras_albert.training import AlbertLamb

    table_a = keras.Variable(np.ones((6, 3), "float32"), name="table")
    table_b = keras.Variable(np.ones((6, 3), "float32"), name="table")
    values = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    sparse = tf.IndexedSlices(values, tf.constant([1, 4]), tf.constant([6, 3]))
    AlbertLamb(0.1).apply_gradients([(sparse, table_a)])
    AlbertLamb(0.1).apply_gradients([(tf.convert_to_tensor(sparse), table_b)])
    print(json.dumps(dict(a=table_a.numpy().tolist(), b=table_b.numpy().tolist())))
    """
)


def test_sparse_gradients_equal_their_dense_form():
    # tf.IndexedSlices are TensorFlow's sparse gradients: checked in a
    # TensorFlow process whatever this run's backend.
    pytest.importorskip("tensorflow", reason="tf.IndexedSlices are TensorFlow's")
    out = _run_subprocess(_SPARSE_SCRIPT)
    table_a, table_b = np.array(out["a"]), np.array(out["b"])
    np.testing.assert_allclose(table_a, table_b, rtol=1e-7)
    # Decay reaches rows without a gradient too, as in the dense original.
    assert not np.allclose(table_a[0], 1.0)


def test_keras_exclude_hook_extends_the_list():
    model = _model()
    kernel = model.get_layer("out").kernel
    optimizer = AlbertLamb()
    optimizer.exclude_from_weight_decay(var_names=["out/kernel"])
    assert not optimizer.uses_weight_decay(kernel)
    assert not optimizer.uses_layer_adaptation(kernel)
    assert optimizer.uses_weight_decay(model.get_layer("dense").kernel)


@pytest.mark.large
def test_fit_with_jit_compile_reduces_the_loss():
    keras.utils.set_random_seed(2)
    model = _model()
    model.compile(optimizer=AlbertLamb(0.05), loss="mse", jit_compile=True)
    x = np.random.default_rng(2).random((64, 4)).astype("float32")
    y = np.stack([x.sum(1), x[:, 0] - x[:, 1]], axis=1)
    history = model.fit(x, y, batch_size=16, epochs=5, verbose=0).history["loss"]
    assert history[-1] < 0.5 * history[0]


@pytest.mark.large
def test_mixed_bfloat16_trains_with_float32_state():
    keras.utils.set_random_seed(3)
    model = _model(dtype="mixed_bfloat16")
    optimizer = AlbertLamb(0.05)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=True)
    x = np.random.default_rng(3).random((64, 4)).astype("float32")
    y = np.stack([x.sum(1), x[:, 0] - x[:, 1]], axis=1)
    history = model.fit(x, y, batch_size=16, epochs=5, verbose=0).history["loss"]
    assert model.layers[0].compute_dtype == "bfloat16"
    assert history[-1] < 0.5 * history[0]
    assert {v.dtype for v in model.trainable_variables} == {"float32"}
    slots = [v for v in optimizer.variables if "adam_" in v.path]
    assert len(slots) == 2 * len(model.trainable_variables)
    assert {v.dtype for v in slots} == {"float32"}


def test_loss_scale_optimizer_wrapping_gives_the_same_step():
    # mixed_float16 makes `compile` wrap the optimizer like this.
    keras.utils.set_random_seed(4)
    plain_model, scaled_model = _model(), _model()
    scaled_model.set_weights(plain_model.get_weights())
    grads = [
        np.random.default_rng(4).standard_normal(v.shape).astype("float32")
        for v in plain_model.trainable_variables
    ]
    plain = AlbertLamb(0.01)
    scaled = keras.optimizers.LossScaleOptimizer(AlbertLamb(0.01))
    _apply_once(plain, grads, plain_model.trainable_variables)
    factor = float(scaled.initial_scale)
    _apply_once(scaled, [g * factor for g in grads], scaled_model.trainable_variables)
    for a, b in zip(plain_model.get_weights(), scaled_model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def _apply_once(optimizer, grads, variables):
    """One step, as `fit` takes it on this backend: JAX's is stateless
    (Keras's eager `LossScaleOptimizer.apply_gradients` leaks a tracer there,
    its own Adam's too)."""
    grads = [keras.ops.convert_to_tensor(g) for g in grads]  # torch's clipping multiplies tensors
    if keras.config.backend() != "jax":
        optimizer.apply_gradients(zip(grads, variables))
        return
    optimizer.build(variables)
    trained, state = optimizer.stateless_apply(
        [v.value for v in optimizer.variables], grads, [v.value for v in variables])
    for variable, value in zip(variables, trained):
        variable.assign(value)
    for variable, value in zip(optimizer.variables, state):
        variable.assign(value)


def test_config_round_trip():
    optimizer = AlbertLamb(
        learning_rate=WarmupLinearDecay(0.002, 10, 100),
        beta_1=0.8,
        beta_2=0.99,
        epsilon=1e-5,
        weight_decay_rate=0.02,
        exclude_from_weight_decay=["bias"],
        exclude_from_layer_adaptation=["layer_norm"],
        global_clipnorm=2.0,
        name="lamb",
    )
    config = optimizer.get_config()
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert isinstance(restored, AlbertLamb)
    assert restored.get_config() == config
    assert config["exclude_from_layer_adaptation"] == ["layer_norm"]
    assert config["global_clipnorm"] == 2.0
    assert "weight_decay" not in config
    # Plain float learning rate and JSON-able config.
    simple = AlbertLamb(0.01)
    json.dumps(simple.get_config())
    assert AlbertLamb.from_config(simple.get_config()).get_config() == simple.get_config()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"weight_decay": 0.01}, "weight_decay_rate"),
        ({"beta_1": 1.5}, "beta_1=1.5"),
        ({"epsilon": -1.0}, "epsilon=-1.0"),
        ({"weight_decay_rate": "high"}, "weight_decay_rate='high'"),
        ({"exclude_from_weight_decay": "bias"}, "exclude_from_weight_decay='bias'"),
        ({"exclude_from_layer_adaptation": ["("]}, "invalid regular expression"),
    ],
)
def test_invalid_arguments_name_argument_and_value(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        AlbertLamb(**kwargs)


_MIRRORED_SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    from keras_albert.training import AlbertLamb, WarmupLinearDecay

    def build():
        model = keras.Sequential([
            keras.Input((6,)),
            keras.layers.Dense(8, activation="tanh", name="dense"),
            keras.layers.LayerNormalization(name="layer_norm"),
            keras.layers.Dense(1, name="out"),
        ])
        model.compile(
            optimizer=AlbertLamb(WarmupLinearDecay(0.05, 2, 10)),
            loss="mse", jit_compile=False)
        return model

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 6)).astype("float32")
    # Large targets: gradients far above the clip norm of 1.0.
    y = (20.0 * x.sum(axis=1, keepdims=True)).astype("float32")

    keras.utils.set_random_seed(0)
    single = build()
    initial = single.get_weights()
    with tf.GradientTape() as tape:
        loss = keras.losses.mean_squared_error(y[:8], single(x[:8]))
        loss = tf.reduce_mean(loss)
    grads = tape.gradient(loss, single.trainable_variables)
    grad_norm = float(tf.linalg.global_norm(grads))

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        mirrored = build()
    mirrored.set_weights(initial)

    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True)
    h1 = single.fit(data, epochs=2, verbose=0).history["loss"]
    h2 = mirrored.fit(data, epochs=2, verbose=0).history["loss"]
    diff = max(float(np.abs(a - b).max())
               for a, b in zip(single.get_weights(), mirrored.get_weights()))
    moved = max(float(np.abs(a - b).max())
                for a, b in zip(initial, mirrored.get_weights()))
    print(json.dumps(dict(
        replicas=strategy.num_replicas_in_sync, grad_norm=grad_norm,
        diff=diff, moved=moved, single=h1, mirrored=h2,
        iterations=int(mirrored.optimizer.iterations.numpy()))))
    """
)


def _run_subprocess(script):
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.large
def test_mirrored_strategy_on_two_cpus_equals_single_device():
    pytest.importorskip("tensorflow", reason="tf.distribute's MirroredStrategy is TensorFlow's")
    out = _run_subprocess(_MIRRORED_SCRIPT)
    assert out["replicas"] == 2
    assert out["iterations"] == 8
    assert out["grad_norm"] > 10.0  # Clipping is active.
    assert out["moved"] > 1e-2
    # Clipping after the all-reduce makes 2 replicas match 1 device.
    assert out["diff"] < 1e-5, out
