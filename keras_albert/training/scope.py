"""Where a model is built and trained, on every backend.

On TensorFlow: the scope of the tf.distribute strategy `--strategy` names
(`strategy.resolve_strategy`). On JAX and PyTorch there is no such scope:
one device, or the global `keras.distribution` (JAX), which Keras applies
inside the compiled step; asking there for a tf.distribute strategy is
refused in one line.
"""

import contextlib

import keras

STRATEGY_NAMES = ("auto", "tpu", "gpu", "mirrored", "multi_worker", "cpu")
# What a single-device run on JAX or PyTorch also honours.
_ANY_BACKEND = ("auto", "cpu", "gpu")


def resolve_training(name="auto", tpu=None):
    """`(scope, strategy)`: the strategy (None off TensorFlow) and the
    context to build the model in."""
    if keras.config.backend() != "tensorflow":
        check_strategy_for_backend(name)
        return contextlib.nullcontext(), None
    from keras_albert.training.strategy import resolve_strategy

    strategy = resolve_strategy(name, tpu=tpu)
    return strategy.scope(), strategy


def check_strategy_for_backend(name):
    """Refuses, in one line, a tf.distribute strategy off TensorFlow."""
    backend = keras.config.backend()
    if backend != "tensorflow" and name not in _ANY_BACKEND:
        raise ValueError(
            f"--strategy={name} is a tf.distribute strategy and needs KERAS_BACKEND=tensorflow; "
            f"this run is on KERAS_BACKEND={backend} (use keras.distribution there)."
        )


def training_scope(name="auto", tpu=None):
    """Just the context of `resolve_training`."""
    return resolve_training(name, tpu)[0]
