"""Checks the numbers of a saved `AlbertBackbone` config before it is built.

Code that reads a preset's config.json directly (continued pretraining
sizes its work from it) and the backbone's constructor would otherwise
trip over a missing key or `"128"` with a KeyError or TypeError that names
neither the file nor the fix.
"""

# What `get_config` always writes: the model cannot be rebuilt without them
# (a missing `max_sequence_length` would build 512 positions, not the saved ones).
REQUIRED_KEYS = (
    "vocabulary_size",
    "num_layers",
    "num_heads",
    "embedding_dim",
    "hidden_dim",
    "intermediate_dim",
    "max_sequence_length",
)
POSITIVE_INT_KEYS = REQUIRED_KEYS + (
    "num_groups",
    "num_inner_repetitions",
    "num_segments",
    "num_feedforward_stacks",
    "bottleneck_dim",
)
_BACKBONE_NAMES = ("keras_albert>AlbertBackbone",)


def is_albert_backbone(config):
    return isinstance(config, dict) and config.get("registered_name") in _BACKBONE_NAMES


def check_backbone_config(config, path, where="the backbone"):
    """Raises a ValueError naming `path`, the key, the value and what is
    accepted unless `config` (the inner `config` dict) has every required
    key and positive integers where the backbone takes them."""
    missing = [key for key in REQUIRED_KEYS if key not in config]
    if missing:
        raise ValueError(
            f"Preset file {str(path)!r}: {where}'s config lacks {missing}, which "
            "`save_to_preset` always writes. Re-create the preset with "
            "`model.save_to_preset(dir)` or `python -m keras_albert convert`."
        )
    for key in POSITIVE_INT_KEYS:
        value = config.get(key)
        if value is None and key not in REQUIRED_KEYS:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"Preset file {str(path)!r}: {where}'s {key} must be a positive "
                f"integer (a JSON number, not a string). Received: {key}={value!r:.80}"
            )
