"""TF2 TF-Hub ALBERT encoders (the `albert_en_base` layout) -> presets.

Those modules are SavedModels of the TF Model Garden's `AlbertEncoder`: one
shared `transformer` layer (no groups), attention kernels kept per head
([H, heads, head_dim] and [heads, head_dim, H]) and, in an `mlm` subobject,
the masked-LM head. Variables are read by name from the loaded SavedModel;
the number of layers is not stored in any variable, so it is taken from
`overrides`, from the shape file our own export writes beside the module,
or from the official config with the same width. Our export's folder
(`encoder/` and `preprocessor/`) is taken whole: the module is its encoder
and the vocabulary its preprocessor's.
"""

import json
import logging
import pathlib

import numpy as np

from keras_albert.convert.converted_preset import check_destination
from keras_albert.convert.converted_preset import check_source
from keras_albert.convert.converted_preset import write_converted_preset
from keras_albert.models.albert_presets import OFFICIAL_PRESETS
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.progress import logged_step

# TF-Hub modules are TensorFlow SavedModels; without TensorFlow, one line
# says what to install.
tf = require_tensorflow("Reading TF-Hub modules", backend_too=False)

# Written by `export_tfhub` into the encoder's assets: {"num_layers", "num_heads"}.
ENCODER_SHAPE_FILE = "keras_albert_encoder_shape.json"
_LAYER = "bert/encoder/transformer/group_0/inner_group_0"
_logger = logging.getLogger(__name__)
_ATTENTION = f"{_LAYER}/attention_1"


def _dense(hub, tf1):
    return [(f"{hub}/kernel", f"{tf1}/kernel"), (f"{hub}/bias", f"{tf1}/bias")]


def _norm(hub, tf1):
    return [(f"{hub}/gamma", f"{tf1}/gamma"), (f"{hub}/beta", f"{tf1}/beta")]


# (TF-Hub name, TF1 name); the Model Garden's names for Google's variables.
HUB_NAMES = [
    ("word_embeddings/embeddings", "bert/embeddings/word_embeddings"),
    ("position_embedding/embeddings", "bert/embeddings/position_embeddings"),
    ("type_embeddings/embeddings", "bert/embeddings/token_type_embeddings"),
    *_norm("embeddings/layer_norm", "bert/embeddings/LayerNorm"),
    *_dense("embedding_projection", "bert/encoder/embedding_hidden_mapping_in"),
    *_dense("transformer/self_attention/query", f"{_ATTENTION}/self/query"),
    *_dense("transformer/self_attention/key", f"{_ATTENTION}/self/key"),
    *_dense("transformer/self_attention/value", f"{_ATTENTION}/self/value"),
    *_dense("transformer/self_attention/attention_output", f"{_ATTENTION}/output/dense"),
    *_norm("transformer/self_attention_layer_norm", f"{_LAYER}/LayerNorm"),
    *_dense("transformer/intermediate", f"{_LAYER}/ffn_1/intermediate/dense"),
    *_dense("transformer/output", f"{_LAYER}/ffn_1/intermediate/output/dense"),
    *_norm("transformer/output_layer_norm", f"{_LAYER}/LayerNorm_1"),
    *_dense("pooler_transform", "bert/pooler/dense"),
]
HUB_MLM_NAMES = [
    *_dense("cls/predictions/transform/dense", "cls/predictions/transform/dense"),
    *_norm("cls/predictions/transform/LayerNorm", "cls/predictions/transform/LayerNorm"),
    ("cls/predictions/output_bias/bias", "cls/predictions/output_bias"),
    ("cls/predictions/output_bias", "cls/predictions/output_bias"),
]


def _strip(name):
    return name[: -len(":0")] if name.endswith(":0") else name


def _match(name, table):
    """The TF1 name for a hub variable name, allowing an outer scope."""
    for hub, tf1 in table:
        if name == hub or name.endswith("/" + hub):
            return tf1
    return None


def read_hub_variables(src):
    """{TF1 name: array} (per-head kernels flattened) from a hub module."""
    try:
        loaded = tf.saved_model.load(str(src))
    except (OSError, ValueError, tf.errors.OpError) as error:
        raise ValueError(
            f"Cannot load {str(src)!r} as a SavedModel: {error}"
        ) from None
    variables = list(getattr(loaded, "variables", []))
    # The `mlm` subobject shares the encoder's variables and adds the head's.
    variables += list(getattr(getattr(loaded, "mlm", None), "variables", []))
    weights = {}
    for variable in variables:
        name = _strip(variable.name)
        tf1 = _match(name, HUB_NAMES + HUB_MLM_NAMES)
        weights[tf1 or f"(TF-Hub) {name}"] = variable.numpy()
    if not weights:
        raise ValueError(
            f"{str(src)!r} has no `variables` list: not a TF2 TF-Hub "
            "(reusable SavedModel) ALBERT encoder."
        )
    return weights


def _flatten_attention(weights):
    """Per-head attention kernels and biases -> Google's flat [H, H], [H]."""
    for part in ("query", "key", "value"):
        for suffix in ("kernel", "bias"):
            name = f"{_ATTENTION}/self/{part}/{suffix}"
            if name in weights and np.ndim(weights[name]) == (3 if suffix == "kernel" else 2):
                array = weights[name]
                weights[name] = array.reshape(array.shape[0], -1) if suffix == "kernel" else array.reshape(-1)
    name = f"{_ATTENTION}/output/dense/kernel"
    if name in weights and np.ndim(weights[name]) == 3:
        array = weights[name]
        weights[name] = array.reshape(-1, array.shape[-1])
    return weights


def _infer_config(weights, overrides, src):
    def shape(tf1):
        if tf1 not in weights:
            raise ValueError(
                f"{str(src)!r} has no variable for {tf1!r}; found: "
                f"{sorted(weights)}."
            )
        return np.shape(weights[tf1])

    vocabulary, embedding = shape("bert/embeddings/word_embeddings")
    query_kernel = shape(f"{_ATTENTION}/self/query/kernel")
    config = {
        "vocabulary_size": vocabulary,
        "embedding_dim": embedding,
        "max_sequence_length": shape("bert/embeddings/position_embeddings")[0],
        "num_segments": shape("bert/embeddings/token_type_embeddings")[0],
        "hidden_dim": query_kernel[0],
        "num_heads": query_kernel[1] if len(query_kernel) == 3 else None,
        "intermediate_dim": shape(f"{_LAYER}/ffn_1/intermediate/dense/kernel")[1],
        "activation": "gelu_approximate",
    }
    official = [
        preset["config"] for preset in OFFICIAL_PRESETS.values()
        if preset["config"]["hidden_dim"] == config["hidden_dim"]
        and preset["config"]["intermediate_dim"] == config["intermediate_dim"]
    ]
    if official:
        config.setdefault("num_layers", official[0]["num_layers"])
        if config["num_heads"] is None:
            config["num_heads"] = official[0]["num_heads"]
    config.update(overrides or {})
    unknown = [key for key in ("num_layers", "num_heads") if config.get(key) is None]
    if unknown:
        raise ValueError(
            f"{str(src)!r} does not store {unknown} and its width matches no "
            "official ALBERT; pass them, e.g. --config '{\"num_layers\": 12}'."
        )
    return config


def _recorded_shape(src):
    """{"num_layers", "num_heads"} our export recorded beside the module, or {}."""
    path = src / "assets" / ENCODER_SHAPE_FILE
    if not path.is_file():
        return {}
    try:
        shape = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{str(path)!r} is not the JSON our TF-Hub export writes: {error}") from None
    return {key: shape[key] for key in ("num_layers", "num_heads") if isinstance(shape.get(key), int)}


def _vocabulary(src):
    """The module's SentencePiece model: in its assets (Google's modules) or,
    for our export's encoder, in the preprocessor beside it."""
    candidates = [src / "assets" / name for name in ("30k-clean.model", "vocab.model", "spiece.model")]
    candidates.append(src.parent / "preprocessor" / "assets" / "vocabulary.spm")
    for candidate in candidates:
        if candidate.is_file():
            return candidate.read_bytes()
    return None


def convert_tfhub_module(src, dst, overrides=None, overwrite=False):
    """Converts a TF2 TF-Hub ALBERT encoder at `src` to a preset; `src` may
    also be the folder `export_tfhub` writes (its `encoder/` is read)."""
    src = pathlib.Path(src)
    check_destination(dst, overwrite)
    check_source(src)
    if not (src / "saved_model.pb").is_file() and (src / "encoder" / "saved_model.pb").is_file():
        src = src / "encoder"
    if not (src / "saved_model.pb").is_file():
        raise FileNotFoundError(
            f"`src` must be a TF-Hub module directory with saved_model.pb (or a TF-Hub export "
            f"holding one in encoder/): {str(src)!r}"
        )
    with logged_step(_logger, f"Loading the TF-Hub module {str(src)!r}"):
        weights = read_hub_variables(src)
    # Heads are read off the per-head kernels, before they are flattened.
    config = _infer_config(weights, {**_recorded_shape(src), **(overrides or {})}, src)
    weights = _flatten_attention(weights)
    vocabulary = _vocabulary(src)
    return write_converted_preset(
        dst, config, weights, vocabulary, source=f"TF-Hub module {str(src)!r}",
        overwrite=overwrite,
    )
