"""Training utilities: ALBERT's LAMB, its schedule, strategies, precision.

Names are imported on first use: LAMB and the schedules run on every
backend (and `keras.distribution` on JAX), while the strategies and `resumable_fit` (tf.distribute,
`tf.train.Checkpoint`) import TensorFlow.
"""

import importlib

_EXPORTS = {
    "apply_keras_distribution_fixes": "keras_distribution_fixes",
    "albert_data_parallel": "distribution",
    "albert_layout_map": "distribution",
    "albert_model_parallel": "distribution",
    "AlbertLamb": "lamb",
    "resumable_fit": "resumable_fit",
    "training_checkpoint": "resumable_fit",
    "WarmupLinearDecay": "schedules",
    "albert_learning_rate": "schedules",
    "albert_pretraining_schedule": "schedules",
    "PRECISION_POLICIES": "precision",
    "STRATEGY_NAMES": "strategy",
    "TPUConnectionError": "strategy",
    "configure_precision": "precision",
    "resolve_strategy": "strategy",
    "xla_supported": "strategy",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
    return getattr(module, name)


def __dir__():
    return sorted(list(globals()) + __all__)
