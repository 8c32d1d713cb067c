"""The preset check every command runs before TensorFlow is imported.

The CLI reaches `presets/` through `pipelines/` only; this is its way to
`presets.preset_kind.check_preset_known`, which reads no model."""

from keras_albert.presets.preset_kind import check_preset_known


def check_known_presets(*presets):
    """Refuses the first of `presets` that is no local directory, bundled
    name, official name or hub handle; None and "" are skipped (an unset
    optional flag)."""
    for preset in presets:
        if preset:
            check_preset_known(preset)
