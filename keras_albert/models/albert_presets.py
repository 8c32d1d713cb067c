"""The presets list under keras-hub's name (`models/albert/albert_presets.py`).

The tables live in `keras_albert.presets.official_presets`, below the
models, because preset resolution needs them too.
"""

from keras_albert.presets.official_presets import BUNDLED_PRESET_DESCRIPTIONS  # noqa: F401
from keras_albert.presets.official_presets import OFFICIAL_PRESETS  # noqa: F401
from keras_albert.presets.official_presets import PRESET_ALIASES  # noqa: F401
