"""Choices of flags whose library modules import TensorFlow.

Copied here so that defining the flags (and `--help`) imports no
TensorFlow; tests/cli/test_help.py checks the copies against the library.
"""

# keras_albert.training.scope.STRATEGY_NAMES
STRATEGY_NAMES = ("auto", "tpu", "gpu", "mirrored", "multi_worker", "cpu")
# keras_albert.training.precision.PRECISION_POLICIES
PRECISION_POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")
# keras_albert.export.tflite_export.QUANTIZATIONS
QUANTIZATIONS = ("none", "float16", "dynamic", "int8")
# keras_albert.models.albert_classifier.POOLING_CHOICES
POOLING_CHOICES = ("cls", "mean")
