"""Layer-wise knowledge distillation from an ALBERT teacher into a student.

Names are imported on first use: the losses and the `Distiller` run on
every backend; task distillation's length-bucketed data uses tf.data.
"""

import importlib

_EXPORTS = {
    "Distiller": "distiller",
    "default_layer_map": "layer_map",
    "resolve_layer_map": "layer_map",
    "attention_transfer_loss": "losses",
    "feature_map_loss": "losses",
    "soft_mlm_loss": "losses",
    "progressive_distillation": "progressive",
    "HeldOutAccuracy": "task_distillation",
    "TaskDistillationLoss": "task_distillation",
    "distill_classifier": "task_distillation",
    "distillation_targets": "task_distillation",
    "teacher_logits": "task_distillation",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
    return getattr(module, name)


def __dir__():
    return sorted(list(globals()) + __all__)
