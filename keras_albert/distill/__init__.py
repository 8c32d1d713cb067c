"""Layer-wise knowledge distillation from an ALBERT teacher into a student."""

from keras_albert.distill.distiller import Distiller
from keras_albert.distill.layer_map import default_layer_map
from keras_albert.distill.layer_map import resolve_layer_map
from keras_albert.distill.losses import attention_transfer_loss
from keras_albert.distill.losses import feature_map_loss
from keras_albert.distill.losses import soft_mlm_loss
from keras_albert.distill.progressive import progressive_distillation
from keras_albert.distill.task_distillation import HeldOutAccuracy
from keras_albert.distill.task_distillation import TaskDistillationLoss
from keras_albert.distill.task_distillation import distill_classifier
from keras_albert.distill.task_distillation import distillation_targets
from keras_albert.distill.task_distillation import teacher_logits
