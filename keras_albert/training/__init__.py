"""Training utilities: ALBERT's LAMB, its schedule, strategies, precision."""

from keras_albert.training.keras_distribution_fixes import (
    apply_keras_distribution_fixes,
)
from keras_albert.training.lamb import AlbertLamb
from keras_albert.training.resumable_fit import resumable_fit
from keras_albert.training.resumable_fit import training_checkpoint
from keras_albert.training.schedules import WarmupLinearDecay
from keras_albert.training.schedules import albert_learning_rate
from keras_albert.training.schedules import albert_pretraining_schedule
from keras_albert.training.strategy import PRECISION_POLICIES
from keras_albert.training.strategy import STRATEGY_NAMES
from keras_albert.training.strategy import TPUConnectionError
from keras_albert.training.strategy import configure_precision
from keras_albert.training.strategy import resolve_strategy
from keras_albert.training.strategy import xla_supported
