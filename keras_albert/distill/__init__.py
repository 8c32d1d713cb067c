"""Layer-wise knowledge distillation from an ALBERT teacher into a student.

Names are imported on first use: the losses and the `Distiller` run on
every backend; task distillation's length-bucketed data uses tf.data.
"""

from keras_albert.utils.lazy_exports import lazy_exports

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
