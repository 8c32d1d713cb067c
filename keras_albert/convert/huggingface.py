"""Hugging Face ALBERT directories <-> keras_albert presets.

A Hugging Face directory holds `config.json` and `model.safetensors` (or
shards with `model.safetensors.index.json`, or `pytorch_model.bin`) and
usually `spiece.model`. Weights are read with safetensors, or with
`torch.load(weights_only=True)`, which refuses pickled code. PyTorch's
`Linear` keeps its kernel as [out, in]; TF1 and Keras as [in, out].
"""

import json
import logging
import os
import pathlib

import numpy as np

from keras_albert.convert.albert_config import albert_config_to_ours
from keras_albert.convert.albert_config import ours_to_hf_config
from keras_albert.convert.albert_config import read_json_config
from keras_albert.convert.converted_preset import check_destination
from keras_albert.convert.converted_preset import check_source
from keras_albert.convert.converted_preset import write_converted_preset
from keras_albert.convert.huggingface_tasks import HEADS_BY_ARCHITECTURE
from keras_albert.convert.huggingface_tasks import hf_task_head
from keras_albert.convert.huggingface_tasks import task_from_hf
from keras_albert.convert.huggingface_tasks import task_head_of
from keras_albert.convert.tf1_names import get_model_weights
from keras_albert.convert.tf1_names import set_model_weights
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.presets.preset_validation import MAX_ASSET_BYTES
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.progress import logged_step
from keras_albert.utils.regular_files import read_regular_bytes

_ENCODER = "bert/encoder/transformer"
_logger = logging.getLogger(__name__)
# Buffers and tied copies Hugging Face may store that carry no weights of
# their own: position ids, and the decoder tied to the word embeddings and
# to `predictions.bias`.
_REDUNDANT = {
    "embeddings.position_ids",
    "predictions.decoder.weight",
    "predictions.decoder.bias",
}


def _linear(hf, tf1):
    return [(f"{hf}.weight", f"{tf1}/kernel", True), (f"{hf}.bias", f"{tf1}/bias", False)]


def _layer_norm(hf, tf1):
    return [(f"{hf}.weight", f"{tf1}/gamma", False), (f"{hf}.bias", f"{tf1}/beta", False)]


def name_table(num_groups, num_inner):
    """[(HF name without `albert.`, TF1 name, transpose)] for a backbone."""
    table = [
        ("embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", False),
        ("embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", False),
        ("embeddings.token_type_embeddings.weight", "bert/embeddings/token_type_embeddings", False),
        *_layer_norm("embeddings.LayerNorm", "bert/embeddings/LayerNorm"),
        *_linear("encoder.embedding_hidden_mapping_in", "bert/encoder/embedding_hidden_mapping_in"),
        *_linear("pooler", "bert/pooler/dense"),
    ]
    for group in range(num_groups):
        for inner in range(num_inner):
            hf = f"encoder.albert_layer_groups.{group}.albert_layers.{inner}"
            tf1 = f"{_ENCODER}/group_{group}/inner_group_{inner}"
            for part in ("query", "key", "value"):
                table += _linear(f"{hf}.attention.{part}", f"{tf1}/attention_1/self/{part}")
            table += _linear(f"{hf}.attention.dense", f"{tf1}/attention_1/output/dense")
            table += _layer_norm(f"{hf}.attention.LayerNorm", f"{tf1}/LayerNorm")
            table += _linear(f"{hf}.ffn", f"{tf1}/ffn_1/intermediate/dense")
            table += _linear(f"{hf}.ffn_output", f"{tf1}/ffn_1/intermediate/output/dense")
            table += _layer_norm(f"{hf}.full_layer_layer_norm", f"{tf1}/LayerNorm_1")
    return table


MLM_TABLE = [
    *_linear("predictions.dense", "cls/predictions/transform/dense"),
    *_layer_norm("predictions.LayerNorm", "cls/predictions/transform/LayerNorm"),
    ("predictions.bias", "cls/predictions/output_bias", False),
]
# Both store the kernel as [2, H]: no transpose.
SOP_TABLE = [
    ("sop_classifier.classifier.weight", "cls/seq_relationship/output_weights", False),
    ("sop_classifier.classifier.bias", "cls/seq_relationship/output_bias", False),
]


def _load_safetensors(path):
    from safetensors.numpy import load_file

    try:
        return load_file(str(path))
    except Exception as error:  # safetensors raises its own error types.
        raise ValueError(f"Cannot read {str(path)!r}: {error}") from None


def _load_torch(path):
    try:
        import torch
    except ImportError:
        raise ValueError(
            f"{str(path)!r} is a PyTorch file and reading it needs torch "
            "(pip install torch), or convert it to model.safetensors."
        ) from None
    try:
        state = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as error:  # unpickling errors come in many types.
        raise ValueError(
            f"Cannot read {str(path)!r} as plain tensors (weights_only=True "
            f"refuses pickled code): {error}"
        ) from None
    return {name: tensor.float().numpy() for name, tensor in state.items()}


def read_hf_state(directory):
    """{HF name: array} from the weight files of `directory`."""
    directory = pathlib.Path(directory)
    single = directory / "model.safetensors"
    index = directory / "model.safetensors.index.json"
    torch_file = directory / "pytorch_model.bin"
    if single.is_file():
        return _load_safetensors(single)
    if index.is_file():
        shards = sorted(set(read_json_config(index).get("weight_map", {}).values()))
        for shard in shards:
            # The index is data: a shard name must not reach outside `directory`.
            if not isinstance(shard, str) or pathlib.PurePath(shard).name != shard:
                raise ValueError(
                    f"{str(index)!r} names shard {shard!r}; shards must be plain "
                    "file names inside the model directory."
                )
        state = {}
        for shard in shards:
            state.update(_load_safetensors(directory / shard))
        return state
    if torch_file.is_file():
        return _load_torch(torch_file)
    raise FileNotFoundError(
        f"No weights in {str(directory)!r}: expected model.safetensors, "
        "model.safetensors.index.json or pytorch_model.bin."
    )


def hf_state_to_tf1(state, config):
    """{TF1 name: array}; unknown HF names are kept so they get reported."""
    state = {
        (name[len("albert."):] if name.startswith("albert.") else name): array
        for name, array in state.items()
    }
    table = name_table(config.get("num_groups", 1), config.get("num_inner_repetitions", 1))
    if any(name.startswith("predictions.") for name in state):
        table += MLM_TABLE
    if any(name.startswith("sop_classifier.") for name in state):
        table += SOP_TABLE
    by_hf_name = {hf: (tf1, transpose) for hf, tf1, transpose in table}
    weights = {}
    for name, array in state.items():
        if name in by_hf_name:
            tf1, transpose = by_hf_name[name]
            weights[tf1] = np.asarray(array).T if transpose else np.asarray(array)
        elif name not in _REDUNDANT:
            weights[f"(Hugging Face) {name}"] = array
    return weights


def convert_huggingface(src, dst, overwrite=False):
    """Converts a Hugging Face ALBERT directory at `src` to a preset: an
    encoder, an `AlbertPretrainer` with the heads it stores, or one of our
    task models with its head for Hugging Face's task models
    (`huggingface_tasks.TASK_HEADS`)."""
    src = pathlib.Path(src)
    check_destination(dst, overwrite)
    if not src.is_dir():
        raise FileNotFoundError(f"`src` must be a Hugging Face model directory: {str(src)!r}")
    check_source(src)
    config_path = src / "config.json"
    raw = read_json_config(config_path)
    if raw.get("model_type") == "gpt2":
        # GPT-2 becomes an AlbertCausalLM with nothing shared (issue 37).
        from keras_albert.convert.huggingface_gpt2 import convert_huggingface_gpt2

        return convert_huggingface_gpt2(src, dst, overwrite=overwrite)
    if raw.get("model_type", "albert") != "albert":
        raise ValueError(
            f"{str(config_path)!r} describes model_type={raw['model_type']!r}; "
            "only 'albert' and 'gpt2' convert."
        )
    config = albert_config_to_ours(raw, "hf", source=f"{str(config_path)!r}")
    architecture = _architecture(raw, config_path)
    task_head = HEADS_BY_ARCHITECTURE.get(architecture)
    source = f"Hugging Face model {str(src)!r}"
    with logged_step(_logger, f"Reading the Hugging Face weights in {str(src)!r}"):
        state = read_hf_state(src)
    head = {}
    if task_head is not None:  # (elsewhere a head's names are reported as unexpected)
        head = {name: state.pop(name) for name in task_head.names if name in state}
        if len(head) != len(task_head.names):
            raise ValueError(
                f"{source} is an {task_head.architecture} without its head: "
                f"{sorted(set(task_head.names) - set(head))} missing."
            )
    weights = hf_state_to_tf1(state, config)
    vocabulary = src / "spiece.model"
    # A cased model says so in its tokenizer config; published ALBERT is uncased.
    tokenizer_config = src / "tokenizer_config.json"
    lowercase = True
    if os.path.lexists(tokenizer_config):
        lowercase = read_json_config(tokenizer_config).get("do_lower_case", True) is not False
    vocabulary = (read_regular_bytes(vocabulary, "`src` file", MAX_ASSET_BYTES, follow_link=True)
                  if os.path.lexists(vocabulary) else None)
    if task_head is None:
        if architecture == "AlbertForMaskedLM":
            _fresh_pooler_where_missing(weights, AlbertBackbone(**config))
        return write_converted_preset(
            dst, config, weights, vocabulary, source=source, overwrite=overwrite, lowercase=lowercase
        )
    name = task_head.task_class.__name__
    with logged_step(_logger, f"Building the {name} and checking {len(weights) + len(head)} weights"):
        backbone = AlbertBackbone(**config)
        if not task_head.pooler:
            _fresh_pooler_where_missing(weights, backbone)
        set_model_weights(backbone, weights, source=source)
        tokenizer = AlbertTokenizer(proto=vocabulary, lowercase=lowercase) if vocabulary is not None else None
        model = task_from_hf(task_head, backbone, head, raw, tokenizer, source)
    with logged_step(_logger, f"Writing the preset {str(dst)!r}"):
        with atomic_directory(dst, "preset", overwrite) as staging:
            model.save_to_preset(staging)
    return str(dst)


# What `convert_huggingface` reads besides the task models: the encoder
# and its pretraining heads.
_ENCODER_ARCHITECTURES = ("AlbertModel", "AlbertForMaskedLM", "AlbertForPreTraining")
_POOLER = "bert/pooler/"


def _fresh_pooler_where_missing(weights, backbone):
    """Hugging Face builds its masked LM and token-level task models without
    ALBERT's pooler: the preset keeps `backbone`'s fresh one, as Hugging
    Face's own classifier does when it loads such a checkpoint (nothing
    these models compute reads it)."""
    fresh = {name: array for name, array in get_model_weights(backbone).items() if name.startswith(_POOLER)}
    if any(name in weights for name in fresh):
        return  # stored (Google's converted checkpoints keep it): checked as every weight is
    _logger.info("The checkpoint has no pooler (Hugging Face leaves it out of this model): the preset's "
                 "starts from fresh weights, which fine-tuning on [CLS] learns.")
    weights.update(fresh)


def _architecture(raw, config_path):
    """The config's ALBERT architecture (AlbertModel where it names none):
    the encoder's, a pretraining one or a task model's."""
    named = raw.get("architectures") or ["AlbertModel"]
    accepted = [*_ENCODER_ARCHITECTURES, *HEADS_BY_ARCHITECTURE]
    if not isinstance(named, list) or len(named) != 1 or named[0] not in accepted:
        raise ValueError(
            f"{str(config_path)!r} names architectures={named!r:.200}; this converter reads one of "
            f"{accepted}."
        )
    return named[0]


def model_to_hf_state(model):
    """{HF name: array} for one of our backbones, pretrainers, masked LMs or
    task models (`huggingface_tasks.TASK_HEADS`)."""
    backbone = getattr(model, "backbone", model)
    table = name_table(backbone.num_groups, backbone.num_inner_repetitions)
    task_head = task_head_of(model)
    if task_head is not None:
        weights = get_model_weights(backbone)
        if not task_head.pooler:  # Hugging Face's model has none
            table = [row for row in table if not row[1].startswith(_POOLER)]
            weights = {name: array for name, array in weights.items() if not name.startswith(_POOLER)}
        table = [(f"albert.{hf}", tf1, t) for hf, tf1, t in table]
        return {**_named_state(weights, table), **hf_task_head(model)[0]}
    weights = get_model_weights(model)
    if hasattr(model, "masked_lm_head"):
        # Task models keep the backbone under `albert.`; AlbertModel does not.
        table = [(f"albert.{hf}", tf1, t) for hf, tf1, t in table] + MLM_TABLE
        if getattr(model, "sentence_head", None) is not None:  # (AlbertMaskedLM has none)
            table += SOP_TABLE
    return _named_state(weights, table)


def _named_state(weights, table):
    names = {tf1 for _, tf1, _ in table}
    if set(weights) != names:
        raise ValueError(
            "This model has weights Hugging Face ALBERT cannot hold: "
            f"{sorted(set(weights) - names)}."
        )
    return {
        hf: np.ascontiguousarray(weights[tf1].T if transpose else weights[tf1])
        for hf, tf1, transpose in table
    }


def hf_architecture(model):
    if task_head_of(model) is not None:
        return task_head_of(model).architecture
    if not hasattr(model, "masked_lm_head"):
        return "AlbertModel"
    return "AlbertForPreTraining" if getattr(model, "sentence_head", None) is not None else "AlbertForMaskedLM"


def export_huggingface(model, dst, vocabulary=None, overwrite=False, lowercase=True):
    """Writes `model` as a Hugging Face ALBERT directory at `dst`; its
    tokenizer lowercases as the preset's did (`lowercase`)."""
    from safetensors.numpy import save_file

    dst = check_destination(dst, overwrite, kind="huggingface")
    backbone = getattr(model, "backbone", model)
    config = ours_to_hf_config(backbone.get_config(), hf_architecture(model))
    state = model_to_hf_state(model)
    if task_head_of(model) is not None:
        config.update(hf_task_head(model)[1])
    with logged_step(_logger, f"Writing the Hugging Face model {str(dst)!r}"):
        with atomic_directory(dst, "huggingface", overwrite) as staging:
            staging = pathlib.Path(staging)
            save_file(state, str(staging / "model.safetensors"), metadata={"format": "pt"})
            (staging / "config.json").write_text(json.dumps(config, indent=2))
            if vocabulary is not None:
                (staging / "spiece.model").write_bytes(vocabulary)
                (staging / "tokenizer_config.json").write_text(
                    json.dumps({"tokenizer_class": "AlbertTokenizer", "do_lower_case": lowercase})
                )
    return str(dst)
