"""Checkpoint converters. Every format is mapped to and from the variable
names of Google's TF1 release (see `tf1_names`), the one hub format.

keras-hub presets go both ways with their task heads:
`from_keras_hub_preset(src, dst)` and `to_keras_hub_preset(model, dst)`.
"""

from keras_albert.convert.keras_hub_preset import from_keras_hub_preset  # noqa: F401
from keras_albert.convert.keras_hub_preset import to_keras_hub_preset  # noqa: F401
