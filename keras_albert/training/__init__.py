"""Training utilities: ALBERT's LAMB, its schedule, strategies, precision,
and the one fine-tuning loop (`fit_keeping_best`) every task trains with.

Names are imported on first use: LAMB and the schedules run on every
backend (and `keras.distribution` on JAX), while the strategies and `resumable_fit` (tf.distribute,
`tf.train.Checkpoint`) import TensorFlow.
"""

from keras_albert.utils.lazy_exports import lazy_exports

_EXPORTS = {
    "apply_keras_distribution_fixes": "keras_distribution_fixes",
    "albert_data_parallel": "distribution",
    "albert_layout_map": "distribution",
    "albert_model_parallel": "distribution",
    "AlbertLamb": "lamb",
    "EpochScores": "epoch_logging",
    "EpochTensorBoard": "epoch_logging",
    "FitOutcome": "fine_tuning_loop",
    "KeepBestEpoch": "best_epoch",
    "fit_keeping_best": "fine_tuning_loop",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
