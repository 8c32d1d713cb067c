"""resolve_strategy; nothing here dials beyond 127.0.0.1.

TensorFlow only (tf.distribute); skipped without it. configure_precision runs on
every backend in tests/training/test_precision.py.
"""

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import keras
import pytest

tf = pytest.importorskip("tensorflow", reason="tf.distribute strategies are TensorFlow's")

from keras_albert.training import STRATEGY_NAMES  # noqa: E402
from keras_albert.training import TPUConnectionError  # noqa: E402
from keras_albert.training import resolve_strategy  # noqa: E402
from keras_albert.training import strategy as strategy_module  # noqa: E402


@pytest.fixture
def no_tpu_environment(monkeypatch):
    for name in ("TPU_NAME", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "TPU_CONFIG",
                 "COLAB_TPU_ADDR", "TPU_ACCELERATOR_TYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(strategy_module.glob, "glob", lambda pattern: [])


@pytest.fixture
def loopback_only(monkeypatch):
    """Fails the test if the resolver would dial anything but loopback, or
    would start TensorFlow's real TPU connection."""
    dialed = []
    real_probe = strategy_module._probe_address

    def probe(host, port, timeout_seconds):
        assert host in ("127.0.0.1", "localhost", "::1"), host
        dialed.append((host, port))
        return real_probe(host, port, timeout_seconds)

    def forbidden_connect(resolver):
        raise AssertionError("the real TPU connection must not run in tests")

    monkeypatch.setattr(strategy_module, "_probe_address", probe)
    monkeypatch.setattr(strategy_module, "_connect_tpu_system", forbidden_connect)
    return dialed


def _free_loopback_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def listening_port():
    """A loopback port that accepts TCP connections (and says nothing)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    yield server.getsockname()[1]
    server.close()


def _has_gpu():
    return bool(tf.config.list_logical_devices("GPU"))


def test_unknown_name_lists_argument_value_and_choices():
    with pytest.raises(ValueError) as info:
        resolve_strategy("tpu_pod")
    message = str(info.value)
    assert "`name`" in message and "name='tpu_pod'" in message
    for name in STRATEGY_NAMES:
        assert repr(name) in message
    with pytest.raises(ValueError, match="name=None"):
        resolve_strategy(None)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(name="gpu", tpu="grpc://127.0.0.1:1"), "only used with name='tpu'"),
        (dict(name="tpu", tpu=""), "tpu=''"),
        (dict(name="tpu", tpu="grpc://", timeout_seconds=1), "tpu='grpc://'"),
        (dict(name="cpu", timeout_seconds=0), "timeout_seconds=0"),
        (dict(name="cpu", timeout_seconds=float("inf")), "timeout_seconds=inf"),
    ],
)
def test_invalid_arguments(kwargs, message, loopback_only):
    with pytest.raises(ValueError, match=message):
        resolve_strategy(**kwargs)
    assert loopback_only == []


def test_cpu_is_one_device_on_cpu():
    strategy = resolve_strategy("cpu")
    assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
    assert strategy.num_replicas_in_sync == 1
    assert "CPU:0" in strategy.extended.worker_devices[0]
    with strategy.scope():
        variable = keras.Variable(1.0)
    assert "CPU:0" in variable.value.device


def test_auto_without_accelerators(no_tpu_environment):
    strategy = resolve_strategy("auto")
    gpus = tf.config.list_logical_devices("GPU")
    assert strategy.num_replicas_in_sync == max(1, len(gpus))
    if not gpus:
        assert strategy is tf.distribute.get_strategy()


def test_gpu_requires_a_gpu():
    if _has_gpu():
        strategy = resolve_strategy("gpu")
        assert strategy.num_replicas_in_sync == len(
            tf.config.list_logical_devices("GPU")
        )
    else:
        with pytest.raises(RuntimeError, match="name='gpu'"):
            resolve_strategy("gpu")


def test_tpu_without_address_explains_what_to_pass(no_tpu_environment, loopback_only):
    with pytest.raises(ValueError, match="--tpu"):
        resolve_strategy("tpu")
    assert loopback_only == []


def test_tpu_at_a_loopback_port_nobody_listens_on_fails_fast(loopback_only):
    address = f"grpc://127.0.0.1:{_free_loopback_port()}"
    start = time.monotonic()
    with pytest.raises(TPUConnectionError) as info:
        resolve_strategy("tpu", tpu=address, timeout_seconds=20)
    assert time.monotonic() - start < 10  # Refused at once, not at the deadline.
    message = str(info.value)
    assert address in message and "timeout_seconds=20" in message
    assert "--tpu" in message and "ConnectionRefusedError" in message
    assert not info.value.tensorflow_state_modified
    assert loopback_only == [("127.0.0.1", int(address.rsplit(":", 1)[1]))]


def test_tpu_connection_that_hangs_times_out(monkeypatch, listening_port, loopback_only):
    release = threading.Event()
    started = threading.Event()

    def hanging_connect(resolver):
        # What TensorFlow does at a bogus grpc:// address: block.
        started.set()
        release.wait(60)

    monkeypatch.setattr(strategy_module, "_connect_tpu_system", hanging_connect)
    address = f"grpc://127.0.0.1:{listening_port}"
    start = time.monotonic()
    try:
        with pytest.raises(TPUConnectionError) as info:
            resolve_strategy("tpu", tpu=address, timeout_seconds=1.5)
        elapsed = time.monotonic() - start
    finally:
        release.set()
    assert started.is_set()
    assert 1.0 < elapsed < 6.0
    message = str(info.value)
    assert message.startswith("Timed out connecting to and initializing the TPU")
    assert address in message and "timeout_seconds=1.5" in message
    assert info.value.tensorflow_state_modified


def test_slow_resolution_times_out(monkeypatch, loopback_only):
    release = threading.Event()
    monkeypatch.setattr(
        strategy_module, "_build_tpu_resolver", lambda tpu: release.wait(60)
    )
    start = time.monotonic()
    try:
        with pytest.raises(TPUConnectionError, match="Timed out resolving the TPU"):
            resolve_strategy("tpu", tpu="my-cloud-tpu", timeout_seconds=0.5)
    finally:
        release.set()
    assert time.monotonic() - start < 5.0
    assert loopback_only == []


def test_auto_falls_back_when_the_tpu_is_unreachable(loopback_only, caplog):
    address = f"grpc://127.0.0.1:{_free_loopback_port()}"
    with caplog.at_level(logging.WARNING, logger=strategy_module.__name__):
        strategy = resolve_strategy("auto", tpu=address, timeout_seconds=20)
    assert not isinstance(strategy, tf.distribute.TPUStrategy)
    assert strategy.num_replicas_in_sync >= 1
    assert "falling back" in caplog.text and address in caplog.text


def test_auto_raises_when_a_connection_hangs(monkeypatch, listening_port, loopback_only):
    # After TensorFlow started connecting, falling back is not safe.
    release = threading.Event()
    monkeypatch.setattr(
        strategy_module, "_connect_tpu_system", lambda resolver: release.wait(60)
    )
    try:
        with pytest.raises(TPUConnectionError, match="Timed out"):
            resolve_strategy(
                "auto", tpu=f"grpc://127.0.0.1:{listening_port}", timeout_seconds=1.0
            )
    finally:
        release.set()


def test_environment_hints(monkeypatch, no_tpu_environment):
    assert strategy_module._tpu_from_environment() is False
    monkeypatch.setenv("COLAB_TPU_ADDR", "127.0.0.1:8470")
    assert strategy_module._tpu_from_environment() == "grpc://127.0.0.1:8470"
    monkeypatch.setenv("TPU_NAME", "my-tpu")
    assert strategy_module._tpu_from_environment() is None  # Resolver reads it.
    monkeypatch.delenv("TPU_NAME")
    monkeypatch.delenv("COLAB_TPU_ADDR")
    monkeypatch.setattr(
        strategy_module.glob, "glob",
        lambda pattern: ["/dev/accel0"] if "accel" in pattern else [],
    )
    assert strategy_module._tpu_from_environment() == "local"


def _run_subprocess(script):
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_CONFIG", None)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.large
def test_mirrored_on_two_logical_cpus():
    out = _run_subprocess(
        """
        import json
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        from keras_albert.training import resolve_strategy
        strategy = resolve_strategy("mirrored")

        def replica_fn():
            ctx = tf.distribute.get_replica_context()
            return tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0

        per_replica = strategy.run(replica_fn)
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
        print(json.dumps(dict(
            kind=type(strategy).__name__,
            replicas=strategy.num_replicas_in_sync,
            devices=list(strategy.extended.worker_devices),
            total=float(total))))
        """
    )
    assert out["kind"] == "MirroredStrategy"
    assert out["replicas"] == 2
    assert [d[-5:] for d in out["devices"]] == ["CPU:0", "CPU:1"]
    assert out["total"] == 3.0  # 1 + 2: both replicas ran.


@pytest.mark.large
def test_multi_worker_without_tf_config_is_one_local_worker():
    out = _run_subprocess(
        """
        import json
        import tensorflow as tf
        from keras_albert.training import resolve_strategy
        strategy = resolve_strategy("multi_worker")
        value = strategy.reduce(
            tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(2.0)),
            axis=None)
        print(json.dumps(dict(
            multi_worker=isinstance(
                strategy, tf.distribute.MultiWorkerMirroredStrategy),
            replicas=strategy.num_replicas_in_sync,
            value=float(value))))
        """
    )
    assert out["multi_worker"]
    assert out["value"] == 2.0 * out["replicas"]
