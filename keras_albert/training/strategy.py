"""One resolver from `--strategy` / `--tpu` flags to a `tf.distribute.Strategy`.

Connecting to a TPU at a wrong `grpc://` address blocks forever inside
TensorFlow, so every step that may touch the network runs in a daemon thread
with a deadline, and a `grpc://` address is first probed with a plain TCP
connect that fails fast when nothing listens there.
"""

import glob
import logging
import math
import os
import socket
import threading
import time
import urllib.parse

import tensorflow as tf

from keras_albert.training.keras_distribution_fixes import (
    apply_keras_distribution_fixes,
)
from keras_albert.training.precision import PRECISION_POLICIES  # noqa: F401 (re-export)
from keras_albert.training.precision import configure_precision  # noqa: F401 (re-export)
from keras_albert.training.scope import STRATEGY_NAMES

DEFAULT_TPU_TIMEOUT_SECONDS = 120.0
_DEFAULT_TPU_PORT = 8470
# Variables the Cloud TPU client reads when no TPU name is given.
_TPU_ENV_VARIABLES = ("TPU_NAME", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "TPU_CONFIG")

logger = logging.getLogger(__name__)


class TPUConnectionError(RuntimeError):
    """No TPU could be reached in time, or resolving it failed.

    Attributes:
        tensorflow_state_modified: True when the failure happened after
            TensorFlow began connecting to the cluster; the process's
            TensorFlow runtime may then be unusable and should exit.
    """

    def __init__(self, message, tensorflow_state_modified=False):
        super().__init__(message)
        self.tensorflow_state_modified = tensorflow_state_modified


def _check_timeout(timeout_seconds):
    valid = isinstance(timeout_seconds, (int, float)) and not isinstance(
        timeout_seconds, bool
    )
    if not (valid and math.isfinite(timeout_seconds) and timeout_seconds > 0):
        raise ValueError(
            "`timeout_seconds` must be a positive finite number of seconds. "
            f"Received: timeout_seconds={timeout_seconds!r}"
        )
    return float(timeout_seconds)


def _call_with_deadline(function, deadline, what, hint, tensorflow_state_modified=False):
    """Runs `function()` in a daemon thread; raises if it outlives `deadline`.

    A daemon thread, not a ThreadPoolExecutor: the executor's workers are
    joined at interpreter exit, so a hung connect would hang the exit too.
    """
    outcome = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # Re-raised in the caller's thread.
            outcome["error"] = error

    thread = threading.Thread(target=target, name="keras_albert-tpu", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if thread.is_alive():
        raise TPUConnectionError(
            f"Timed out {what}. {hint}",
            tensorflow_state_modified=tensorflow_state_modified,
        )
    if "error" in outcome:
        error = outcome["error"]
        raise TPUConnectionError(
            f"Failed {what} ({type(error).__name__}: {error}). {hint}",
            tensorflow_state_modified=tensorflow_state_modified,
        ) from error
    return outcome["value"]


# The three network-touching steps are module functions so that tests can
# replace them and never dial a remote address.
def _build_tpu_resolver(tpu):
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    # For a Cloud TPU name this asks the Cloud TPU API for the address.
    master = resolver.master()
    return resolver, master


def _probe_address(host, port, timeout_seconds):
    with socket.create_connection((host, port), timeout=timeout_seconds):
        pass


def _connect_tpu_system(resolver):
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)


def _split_grpc_address(address):
    parts = urllib.parse.urlsplit(address)
    try:
        port = parts.port or _DEFAULT_TPU_PORT
    except ValueError:
        port = None
    if parts.scheme != "grpc" or not parts.hostname or port is None:
        raise ValueError(
            "`tpu` must be 'grpc://HOST:PORT', a Cloud TPU name or 'local'. "
            f"Received: tpu={address!r}"
        )
    return parts.hostname, port


def _tpu_strategy(tpu, timeout_seconds):
    deadline = time.monotonic() + timeout_seconds
    described = repr(tpu) if tpu is not None else "None (from TPU_NAME/TPU_CONFIG)"
    hint = (
        f"Received: tpu={described}, timeout_seconds={timeout_seconds:g}. "
        "`tpu` (--tpu) must be 'grpc://HOST:PORT' of a running TPU worker, a "
        "Cloud TPU name, or 'local' on a TPU VM; raise `timeout_seconds` if "
        "the TPU is slow to start."
    )
    if tpu is not None and tpu.startswith("grpc://"):
        _split_grpc_address(tpu)  # Validates before anything is dialed.

    resolver, master = _call_with_deadline(
        lambda: _build_tpu_resolver(tpu), deadline, "resolving the TPU", hint
    )
    if master:
        host, port = _split_grpc_address(master)
        _call_with_deadline(
            lambda: _probe_address(host, port, max(0.1, deadline - time.monotonic())),
            deadline,
            f"reaching the TPU worker at {master} (nothing accepted a connection)",
            hint,
        )
    _call_with_deadline(
        lambda: _connect_tpu_system(resolver),
        deadline,
        f"connecting to and initializing the TPU system at {master or 'local'}",
        hint,
        tensorflow_state_modified=True,
    )
    return tf.distribute.TPUStrategy(resolver)


def _tpu_from_environment():
    """The `tpu` argument implied by the environment, or False if none."""
    if any(os.environ.get(name) for name in _TPU_ENV_VARIABLES):
        return None  # TPUClusterResolver reads these itself.
    colab_address = os.environ.get("COLAB_TPU_ADDR")
    if colab_address:
        return "grpc://" + colab_address
    # TPU VMs expose their chips as /dev/accel* (v2-v4) or vfio (v5+).
    if glob.glob("/dev/accel[0-9]*") or (
        glob.glob("/dev/vfio/[0-9]*") and os.environ.get("TPU_ACCELERATOR_TYPE")
    ):
        return "local"
    return False


def _gpu_strategy(required):
    gpus = tf.config.list_logical_devices("GPU")
    if not gpus:
        if required:
            raise RuntimeError(
                "`name='gpu'` (--strategy=gpu) needs a GPU, but TensorFlow sees "
                "none. Use name='cpu' or 'auto', or check the CUDA install."
            )
        return None
    if len(gpus) == 1:
        return tf.distribute.OneDeviceStrategy(gpus[0].name)
    return tf.distribute.MirroredStrategy([gpu.name for gpu in gpus])


def resolve_strategy(name="auto", tpu=None, timeout_seconds=DEFAULT_TPU_TIMEOUT_SECONDS):
    """Returns the `tf.distribute.Strategy` named by `--strategy`.

    Names:
        - `"tpu"`: `TPUStrategy` on `tpu` (`"grpc://HOST:PORT"`, a Cloud TPU
          name, `"local"` on a TPU VM), or on the TPU named by `TPU_NAME` /
          `TPU_CONFIG` when `tpu` is None.
        - `"gpu"`: one GPU with `OneDeviceStrategy`, several with
          `MirroredStrategy`; an error without GPUs.
        - `"mirrored"`: `MirroredStrategy` over all local GPUs, or over all
          logical CPU devices when there are no GPUs.
        - `"multi_worker"`: `MultiWorkerMirroredStrategy` configured by
          `TF_CONFIG`. Create it first thing in the program, before any other
          TensorFlow op runs.
        - `"cpu"`: `OneDeviceStrategy` on `/cpu:0`, even if GPUs exist.
        - `"auto"`: a TPU when `tpu` is given or the environment points to
          one (TPU_NAME, TPU_CONFIG, COLAB_TPU_ADDR, TPU VM devices), else
          `"gpu"` if there are GPUs, else TensorFlow's default strategy. A
          TPU that cannot be resolved or reached falls back with a warning;
          one that fails after TensorFlow began connecting raises.

    Connecting to a TPU never blocks longer than `timeout_seconds`: the
    resolve, probe and initialize steps share that deadline and a stuck one
    raises `TPUConnectionError`.

    Args:
        name: one of `STRATEGY_NAMES`.
        tpu: optional TPU address or name; only with `"tpu"` or `"auto"`.
        timeout_seconds: positive float, the deadline for reaching the TPU.

    Returns:
        a `tf.distribute.Strategy`. Create models and optimizers inside its
        `scope()`.

    Raises:
        ValueError: for an unknown `name`, a malformed `tpu`, or `tpu` with a
            strategy that does not use it.
        TPUConnectionError: when the TPU cannot be reached in time.
        RuntimeError: for `"gpu"` without a GPU.

    Example:
    >>> from keras_albert.training import resolve_strategy
    >>> strategy = resolve_strategy("cpu")
    >>> strategy.num_replicas_in_sync
    1
    """
    if not isinstance(name, str) or name not in STRATEGY_NAMES:
        raise ValueError(
            f"`name` (--strategy) must be one of {STRATEGY_NAMES}. "
            f"Received: name={name!r}"
        )
    if tpu is not None and (not isinstance(tpu, str) or not tpu.strip()):
        raise ValueError(
            "`tpu` (--tpu) must be None or a non-empty string: 'grpc://HOST:PORT', "
            f"a Cloud TPU name or 'local'. Received: tpu={tpu!r}"
        )
    if tpu is not None and name not in ("tpu", "auto"):
        raise ValueError(
            f"`tpu` (--tpu) is only used with name='tpu' or 'auto'. "
            f"Received: name={name!r}, tpu={tpu!r}"
        )
    timeout_seconds = _check_timeout(timeout_seconds)
    apply_keras_distribution_fixes()

    if name == "tpu":
        if tpu is None and _tpu_from_environment() is False:
            raise ValueError(
                "`name='tpu'` (--strategy=tpu) needs a TPU: pass `tpu` (--tpu) "
                "as 'grpc://HOST:PORT', a Cloud TPU name or 'local' on a TPU VM, "
                "or set TPU_NAME. Received: tpu=None"
            )
        if tpu is None:
            tpu = _tpu_from_environment()
        return _tpu_strategy(tpu, timeout_seconds)
    if name == "gpu":
        return _gpu_strategy(required=True)
    if name == "mirrored":
        devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices(
            "CPU"
        )
        return tf.distribute.MirroredStrategy([device.name for device in devices])
    if name == "multi_worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "cpu":
        return tf.distribute.OneDeviceStrategy("/cpu:0")

    # name == "auto"
    if tpu is None:
        tpu = _tpu_from_environment()
    if tpu is not False:
        try:
            return _tpu_strategy(tpu, timeout_seconds)
        except TPUConnectionError as error:
            if error.tensorflow_state_modified:
                raise
            logger.warning("No TPU; falling back to GPU/CPU. %s", error)
    strategy = _gpu_strategy(required=False)
    return strategy if strategy is not None else tf.distribute.get_strategy()


def xla_supported(strategy):
    """Whether a `jit_compile=True` train step can run under `strategy`.

    XLA's CPU backend has no cross-replica ops: with several replicas on
    CPUs, MirroredStrategy (logical devices of one process) fails with
    "Trying to access resource ... located in device CPU:1", and
    MultiWorkerMirroredStrategy with "No registered 'CollectiveGatherV2'
    OpKernel for XLA_CPU_JIT". TPUs, GPUs and single-replica strategies
    are fine.

    Example:
    >>> xla_supported(resolve_strategy("cpu"))
    True
    """
    if strategy.num_replicas_in_sync <= 1:
        return True
    if isinstance(strategy, (tf.distribute.TPUStrategy,)):
        return True
    devices = getattr(strategy.extended, "worker_devices", ())
    return not any("CPU" in device.upper() for device in devices)
