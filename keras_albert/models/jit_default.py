"""The task models' default `jit_compile`: XLA only where it pays.

Measured on the 2-core AVX2 CPU this project runs on
(`python benchmarks/jit_defaults.py`, ALBERT-base shape, 4 layers,
batch 16 x 64, the task models' train and predict steps): XLA is no faster
there (train steps 0.9x, predict steps ~1.0x of the non-XLA time) and each
new input shape costs 2-3x longer to compile, which length buckets make
several of. So CPU-only machines default to no XLA. With a GPU or TPU the
default stays XLA (`jit_compile=True`), the usual choice there; it is not
measured here (no accelerator). Pass `jit_compile=` to `compile()` to
override either way.

That measurement is TensorFlow's. On JAX every step is compiled anyway
(without `jax.jit` each op dispatches on its own, far slower), and on
PyTorch `jit_compile=True` means `torch.compile`, which Keras itself leaves
off by default: the default follows each backend.
"""

import functools

import keras


@functools.lru_cache(maxsize=None)
def default_jit_compile():
    """TensorFlow: False on CPU-only machines, True with an accelerator;
    JAX: True; PyTorch: False."""
    backend = keras.config.backend()
    if backend == "jax":
        return True
    if backend != "tensorflow":
        return False
    import tensorflow as tf

    return any(device.device_type != "CPU" for device in tf.config.list_physical_devices())


def default_pretraining_jit_compile():
    """The pretraining heads' default: XLA where the backend compiles with
    it (TensorFlow, JAX); PyTorch: False, as Keras's own default, since
    True there means `torch.compile`, minutes of compiling per shape (the
    `pretrain` CLI's tiny test run, 40 steps on this CPU: 103 s with it,
    8 s without)."""
    return keras.config.backend() != "torch"


def pretraining_jit_compile(setting):
    """`setting` (a pipeline's `jit_compile`: True, False or None), with
    None read as `default_pretraining_jit_compile()`."""
    return default_pretraining_jit_compile() if setting is None else bool(setting)
