"""ALBERT configs as Google's release and Hugging Face write them <-> ours.

Both use the names of Google's `albert_config.json`. They disagree on one
word: Google's `gelu` is the tanh approximation (modeling.py), Hugging Face's
`gelu` is the exact erf form and its tanh form is `gelu_new`.
"""

import json
import os
import pathlib

from keras_albert.utils.regular_files import MiB
from keras_albert.utils.regular_files import check_regular_file

# (source key, our argument); both formats share these names.
_KEYS = (
    ("vocab_size", "vocabulary_size"),
    ("num_hidden_layers", "num_layers"),
    ("num_attention_heads", "num_heads"),
    ("embedding_size", "embedding_dim"),
    ("hidden_size", "hidden_dim"),
    ("intermediate_size", "intermediate_dim"),
    ("num_hidden_groups", "num_groups"),
    ("inner_group_num", "num_inner_repetitions"),
    ("hidden_dropout_prob", "dropout"),
    ("attention_probs_dropout_prob", "attention_dropout"),
    ("max_position_embeddings", "max_sequence_length"),
    ("type_vocab_size", "num_segments"),
    ("initializer_range", "initializer_range"),
    ("layer_norm_eps", "layer_norm_epsilon"),
)
_REQUIRED = (
    "vocab_size",
    "num_hidden_layers",
    "num_attention_heads",
    "embedding_size",
    "hidden_size",
    "intermediate_size",
)
# Keys of Google's release that describe variants it never published
# weights for; accepted at their default values.
_INERT_TF1_KEYS = {
    "net_structure_type": 0,
    "gap_size": 0,
    "num_memory_blocks": 0,
    "down_scale_factor": 1,
    "layers_to_keep": [],
}
_ACTIVATIONS = {
    "tf1": {"gelu": "gelu_approximate", "relu": "relu", "tanh": "tanh"},
    "hf": {
        "gelu": "gelu",
        "gelu_new": "gelu_approximate",
        "gelu_pytorch_tanh": "gelu_approximate",
        "gelu_fast": "gelu_approximate",
        "relu": "relu",
        "tanh": "tanh",
        "silu": "silu",
        "swish": "silu",
    },
}
# Our activation -> the Hugging Face name for it.
_HF_ACTIVATION_NAMES = {
    "gelu_approximate": "gelu_new",
    "gelu": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "silu": "silu",
}


def read_json_config(path):
    """Reads a JSON object from `path`, naming the file in every error."""
    path = pathlib.Path(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"Config file not found: {str(path)!r}")
    check_regular_file(path, "Config file", 64 * MiB, follow_link=True)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(
            f"Config file {str(path)!r} is not valid JSON: {error}"
        ) from None
    if not isinstance(config, dict):
        raise ValueError(
            f"Config file {str(path)!r} must hold a JSON object; "
            f"it holds a {type(config).__name__}."
        )
    return config


def albert_config_to_ours(config, source_format, source="the config"):
    """Maps a TF1 (`source_format="tf1"`) or HF (`"hf"`) config to ours."""
    missing = [key for key in _REQUIRED if key not in config]
    if missing:
        raise ValueError(f"{source} lacks required keys {missing}.")
    if source_format == "tf1":
        for key, inert in _INERT_TF1_KEYS.items():
            if config.get(key, inert) not in (inert, None):
                raise ValueError(
                    f"{source} has {key}={config[key]!r}; only the published "
                    f"ALBERT architecture ({key}={inert!r}) is supported."
                )
    activation = config.get("hidden_act", "gelu")
    names = _ACTIVATIONS[source_format]
    if not isinstance(activation, str) or activation not in names:
        raise ValueError(
            f"{source} has hidden_act={activation!r}; accepted: {sorted(names)}."
        )
    ours = {
        mine: config[theirs]
        for theirs, mine in _KEYS
        if theirs in config and config[theirs] is not None
    }
    ours["activation"] = names[activation]
    return ours


def ours_to_hf_config(backbone_config, architecture="AlbertModel"):
    """A Hugging Face `config.json` dict for one of our backbone configs."""
    if backbone_config.get("sharing", "all") != "all":
        raise ValueError(
            "Hugging Face ALBERT shares whole layers only; this backbone has "
            f"sharing={backbone_config['sharing']!r}."
        )
    if backbone_config.get("attention", "full") != "full":
        raise ValueError(
            "Hugging Face ALBERT has full attention only; this backbone has "
            f"attention={backbone_config['attention']!r}."
        )
    activation = backbone_config.get("activation", "gelu_approximate")
    if activation not in _HF_ACTIVATION_NAMES:
        raise ValueError(
            f"activation={activation!r} has no Hugging Face name; accepted: "
            f"{sorted(_HF_ACTIVATION_NAMES)}."
        )
    config = {
        theirs: backbone_config[mine]
        for theirs, mine in _KEYS
        if mine in backbone_config
    }
    config.setdefault("num_hidden_groups", 1)
    config.setdefault("inner_group_num", 1)
    if config.get("attention_probs_dropout_prob") is None:
        config["attention_probs_dropout_prob"] = config.get(
            "hidden_dropout_prob", 0.0
        )
    config.update(
        hidden_act=_HF_ACTIVATION_NAMES[activation],
        model_type="albert",
        architectures=[architecture],
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
    )
    return config
