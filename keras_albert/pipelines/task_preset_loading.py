"""A task preset loaded for `predict` and `evaluate`, at a length of the
user's choosing."""

import logging

from keras_albert.presets.preset_kind import too_long_for_positions
from keras_albert.utils.progress import logged_step

_logger = logging.getLogger(__name__)


def load_task_preset(task_class, preprocessor_class, preset, directory, sequence_length=None):
    """`task_class` from the preset `directory` (named `preset` in
    messages), its preprocessor packing to `sequence_length` when given;
    a length past the backbone's positions is refused."""
    with logged_step(_logger, f"Loading preset {preset!r}"):
        kwargs = {}
        if sequence_length is not None:
            kwargs["preprocessor"] = preprocessor_class.from_preset(str(directory), sequence_length=sequence_length)
        model = task_class.from_preset(str(directory), **kwargs)
    maximum = model.backbone.max_sequence_length
    if sequence_length is not None and sequence_length > maximum:
        raise too_long_for_positions(preset, sequence_length, maximum)
    return model
