"""Hugging Face GPT-2 (`GPT2LMHeadModel`) directories -> AlbertCausalLM presets.

GPT-2 is the causal ALBERT with nothing shared and nothing factorized: one
group per layer (`sharing="none"`), E = H, learned positions, GPT-2's pre-LN
blocks (`normalize_first=True`: no embedding LayerNorm, a final LayerNorm)
and a tied output embedding. What ALBERT has and GPT-2 lacks is set so it
changes nothing: the single segment embedding is zero, the E -> H
embedding projection and the head's H -> E projection are identities with
zero biases, and the output bias is zero. GPT-2's `Conv1D` keeps kernels
as [in, out], as Keras does, so no kernel is transposed; its fused
query/key/value kernel is split in three.

The preset holds the model only: GPT-2's byte-level BPE vocabulary is not
an ALBERT SentencePiece model, so text generation needs packed token ids
(or a tokenizer supplied by the caller).
"""

import logging
import pathlib

import numpy as np

from keras_albert.convert.albert_config import read_json_config
from keras_albert.convert.converted_preset import check_destination
from keras_albert.convert.converted_preset import check_source
from keras_albert.convert.huggingface import read_hf_state
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_causal_lm import AlbertCausalLM
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.progress import logged_step

_logger = logging.getLogger(__name__)
# GPT-2's activation names -> ours (`keras_albert.layers.activations`).
ACTIVATIONS = {
    "gelu_new": "gelu_approximate",
    "gelu_fast": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "gelu": "gelu",
    "relu": "relu",
}
# Buffers older checkpoints store beside the weights (the causal mask).
_BUFFERS = (".attn.bias", ".attn.masked_bias")


def gpt2_config_to_ours(raw, source="config"):
    """`AlbertBackbone` arguments for a Hugging Face `GPT2Config` dict."""
    unsupported = {
        "scale_attn_weights": (raw.get("scale_attn_weights", True), True),
        "scale_attn_by_inverse_layer_idx": (raw.get("scale_attn_by_inverse_layer_idx", False), False),
        "add_cross_attention": (raw.get("add_cross_attention", False), False),
    }
    for name, (value, supported) in unsupported.items():
        if value != supported:
            raise ValueError(
                f"{source} has {name}={value!r}; only {name}={supported!r} "
                "converts (the attention AlbertCausalLM computes)."
            )
    activation = raw.get("activation_function", "gelu_new")
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"{source} has activation_function={activation!r}; accepted: "
            f"{sorted(ACTIVATIONS)}."
        )
    hidden_dim = raw.get("n_embd", 768)
    num_layers = raw.get("n_layer", 12)
    dropouts = {raw.get(name, 0.1) for name in ("resid_pdrop", "embd_pdrop")}
    return {
        "vocabulary_size": raw.get("vocab_size", 50257),
        "num_layers": num_layers,
        "num_heads": raw.get("n_head", 12),
        "embedding_dim": hidden_dim,
        "hidden_dim": hidden_dim,
        "intermediate_dim": raw.get("n_inner") or 4 * hidden_dim,
        "num_groups": num_layers,
        "sharing": "none",
        "dropout": max(dropouts),
        "attention_dropout": raw.get("attn_pdrop", 0.1),
        "max_sequence_length": raw.get("n_positions", 1024),
        "num_segments": 1,
        "activation": ACTIVATIONS[activation],
        "layer_norm_epsilon": raw.get("layer_norm_epsilon", 1e-5),
        "initializer_range": raw.get("initializer_range", 0.02),
        "causal": True,
        "normalize_first": True,
    }


def gpt2_causal_lm(config, state, source="the checkpoint"):
    """An `AlbertCausalLM` holding the GPT-2 weights `state` ({HF name:
    array}); every weight of the checkpoint must be used, and every one the
    model needs must be present."""
    state = {
        (name[len("transformer."):] if name.startswith("transformer.") else name): np.asarray(array)
        for name, array in state.items()
        if not name.endswith(_BUFFERS)
    }
    tied = state.pop("lm_head.weight", None)
    if tied is not None and not np.array_equal(tied, state.get("wte.weight")):
        raise ValueError(
            f"{source} has an lm_head.weight that differs from wte.weight; "
            "AlbertCausalLM ties its output embedding to the input one."
        )
    model = AlbertCausalLM(AlbertBackbone(**config))
    for variable, value in _assignments(model, config, state, source):
        if tuple(variable.shape) != value.shape:
            raise ValueError(
                f"{source}: {variable.path} needs shape {tuple(variable.shape)}, "
                f"the checkpoint gives {value.shape}."
            )
        variable.assign(value.astype("float32"))
    if state:
        raise ValueError(f"{source} has weights a GPT-2 model does not use: {sorted(state)[:5]}")
    return model


def _assignments(model, config, state, source):
    """[(Keras variable, array)] in checkpoint terms."""

    def take(name):
        if name not in state:
            raise ValueError(f"{source} lacks the weight {name!r}.")
        return state.pop(name)

    backbone = model.backbone
    embeddings, encoder = backbone.embeddings, backbone.encoder
    hidden_dim = config["hidden_dim"]
    identity = np.eye(hidden_dim, dtype="float32")
    zeros = np.zeros(hidden_dim, "float32")
    pairs = [
        (embeddings.token_embedding.embeddings, take("wte.weight")),
        (embeddings.position_embeddings, take("wpe.weight")),
        (embeddings.segment_embedding.embeddings, np.zeros((1, hidden_dim), "float32")),
        (embeddings.projection.kernel, identity),
        (embeddings.projection.bias, zeros),
        (encoder.final_layer_norm.gamma, take("ln_f.weight")),
        (encoder.final_layer_norm.beta, take("ln_f.bias")),
        (model.lm_head.projection.kernel, identity),
        (model.lm_head.projection.bias, zeros),
        (model.lm_head.output_bias, np.zeros(config["vocabulary_size"], "float32")),
    ]
    for layer in range(config["num_layers"]):
        prefix = f"h.{layer}."
        attention = encoder.attention_sublayers[f"layer_{layer}_inner_0"]
        feed_forward = encoder.feed_forward_sublayers[f"layer_{layer}_inner_0"]
        self_attention = attention.attention_layer
        kernels = np.split(take(prefix + "attn.c_attn.weight"), 3, axis=-1)
        biases = np.split(take(prefix + "attn.c_attn.bias"), 3, axis=-1)
        for dense, kernel, bias in zip(
            (self_attention.query, self_attention.key, self_attention.value), kernels, biases
        ):
            pairs += [(dense.kernel, kernel), (dense.bias, bias)]
        pairs += [
            (self_attention.output_dense.kernel, take(prefix + "attn.c_proj.weight")),
            (self_attention.output_dense.bias, take(prefix + "attn.c_proj.bias")),
            (attention.layer_norm.gamma, take(prefix + "ln_1.weight")),
            (attention.layer_norm.beta, take(prefix + "ln_1.bias")),
            (feed_forward.intermediate_dense.kernel, take(prefix + "mlp.c_fc.weight")),
            (feed_forward.intermediate_dense.bias, take(prefix + "mlp.c_fc.bias")),
            (feed_forward.output_dense.kernel, take(prefix + "mlp.c_proj.weight")),
            (feed_forward.output_dense.bias, take(prefix + "mlp.c_proj.bias")),
            (feed_forward.layer_norm.gamma, take(prefix + "ln_2.weight")),
            (feed_forward.layer_norm.beta, take(prefix + "ln_2.bias")),
        ]
    return pairs


def is_gpt2_directory(src):
    """True when `src/config.json` says model_type 'gpt2'."""
    config = pathlib.Path(src) / "config.json"
    return config.is_file() and read_json_config(config).get("model_type") == "gpt2"


def convert_huggingface_gpt2(src, dst, overwrite=False):
    """Converts a Hugging Face GPT-2 directory at `src` to an
    `AlbertCausalLM` preset at `dst`; returns the preset path."""
    src = pathlib.Path(src)
    check_destination(dst, overwrite)
    check_source(src)
    config_path = src / "config.json"
    source = f"{str(config_path)!r}"
    config = gpt2_config_to_ours(read_json_config(config_path), source)
    with logged_step(_logger, f"Reading the Hugging Face GPT-2 weights in {str(src)!r}"):
        state = read_hf_state(src)
    with logged_step(_logger, f"Building the causal LM and checking {len(state)} weights"):
        model = gpt2_causal_lm(config, state, f"Hugging Face model {str(src)!r}")
    with logged_step(_logger, f"Writing the preset {str(dst)!r}"):
        with atomic_directory(dst, "preset", overwrite) as staging:
            model.save_to_preset(staging)
    return str(dst)
