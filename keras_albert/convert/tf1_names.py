"""Our weights under the variable names of Google's TF1 release.

Google's names cover `sharing="all"`. Halves that other sharing strategies
keep per layer are named `bert/encoder/transformer/layer_{l}/inner_group_{i}`
in the same pattern, so every keras_albert backbone has a name for every
weight. An `AlbertPretrainer` adds the heads: `cls/predictions/...` (MLM) and
`cls/seq_relationship/...` (SOP, whose kernel TF1 stores as [2, H]).

Every converter reads its source into {TF1 name: array} and goes through
`set_model_weights`, so the checks live in one place.
"""

import numpy as np

_ENCODER = "bert/encoder/transformer"


def _owner_scope(owner):
    # "group_0_inner_1" -> ".../group_0/inner_group_1"
    kind, index, _, inner = owner.split("_")
    return f"{_ENCODER}/{kind}_{index}/inner_group_{inner}"


def _dense(prefix, layer):
    return {f"{prefix}/kernel": layer.kernel, f"{prefix}/bias": layer.bias}


def _layer_norm(prefix, layer):
    return {f"{prefix}/gamma": layer.gamma, f"{prefix}/beta": layer.beta}


def backbone_variables(backbone):
    """Returns {TF1 name: keras variable} for every backbone weight."""
    embeddings = backbone.embeddings
    names = {
        "bert/embeddings/word_embeddings": embeddings.token_embedding.embeddings,
        "bert/embeddings/token_type_embeddings": (
            embeddings.segment_embedding.embeddings
        ),
        "bert/embeddings/position_embeddings": embeddings.position_embeddings,
        **_layer_norm("bert/embeddings/LayerNorm", embeddings.layer_norm),
        **_dense("bert/encoder/embedding_hidden_mapping_in", embeddings.projection),
        **_dense("bert/pooler/dense", backbone.pooler.dense),
    }
    encoder = backbone.encoder
    for owner, sublayer in encoder.attention_sublayers.items():
        scope = _owner_scope(owner) + "/attention_1"
        attention = sublayer.attention_layer
        for part in ("query", "key", "value"):
            names.update(_dense(f"{scope}/self/{part}", getattr(attention, part)))
        names.update(_dense(f"{scope}/output/dense", attention.output_dense))
        names.update(
            _layer_norm(_owner_scope(owner) + "/LayerNorm", sublayer.layer_norm)
        )
    for owner, sublayer in encoder.feed_forward_sublayers.items():
        scope = _owner_scope(owner) + "/ffn_1/intermediate"
        names.update(_dense(f"{scope}/dense", sublayer.intermediate_dense))
        names.update(_dense(f"{scope}/output/dense", sublayer.output_dense))
        names.update(
            _layer_norm(_owner_scope(owner) + "/LayerNorm_1", sublayer.layer_norm)
        )
    return names


# TF1 stores this kernel transposed ([2, H]) relative to a Dense kernel.
SOP_KERNEL = "cls/seq_relationship/output_weights"
MLM_BIAS = "cls/predictions/output_bias"


def head_variables(pretrainer):
    """{TF1 name: keras variable} for the heads of an `AlbertPretrainer`
    (or an `AlbertMaskedLM`)."""
    mlm = pretrainer.masked_lm_head
    names = {
        **_dense("cls/predictions/transform/dense", mlm.transform),
        **_layer_norm("cls/predictions/transform/LayerNorm", mlm.layer_norm),
        MLM_BIAS: mlm.output_bias,
    }
    # An AlbertMaskedLM has the same MLM head and no sentence head.
    sentence_head = getattr(pretrainer, "sentence_head", None)
    if sentence_head is not None:
        names[SOP_KERNEL] = sentence_head.dense.kernel
        names["cls/seq_relationship/output_bias"] = sentence_head.dense.bias
    return names


def model_variables(model):
    """{TF1 name: variable} for a backbone, or a pretrainer with its heads."""
    if hasattr(model, "masked_lm_head"):
        return {**backbone_variables(model.backbone), **head_variables(model)}
    return backbone_variables(model)


def get_model_weights(model):
    """Returns {TF1 name: numpy array}, the SOP kernel as TF1 stores it."""
    weights = {
        name: np.asarray(variable.numpy())
        for name, variable in model_variables(model).items()
    }
    if SOP_KERNEL in weights:
        weights[SOP_KERNEL] = weights[SOP_KERNEL].T
    return weights


def set_model_weights(model, weights, source="the source checkpoint"):
    """Loads {TF1 name: array} into a backbone or pretrainer; all or nothing."""
    weights = dict(weights)
    if SOP_KERNEL in weights and np.ndim(weights[SOP_KERNEL]) == 2:
        weights[SOP_KERNEL] = np.transpose(weights[SOP_KERNEL])
    assign_named_weights(model_variables(model), weights, source)


def get_backbone_weights(backbone):
    """Returns {TF1 name: numpy array} for every backbone weight."""
    return get_model_weights(backbone)


def assign_named_weights(variables, weights, source="the source checkpoint"):
    """Assigns `weights` to `variables` (both keyed by name), all or nothing.

    Every missing, unexpected or mis-shaped name is reported in one error
    before anything is assigned, so a failed load never leaves a model half
    converted.
    """
    missing = sorted(set(variables) - set(weights))
    unexpected = sorted(set(weights) - set(variables))
    mismatched = [
        f"{name}: expected {tuple(variables[name].shape)}, got "
        f"{tuple(np.shape(weights[name]))}"
        for name in sorted(set(variables) & set(weights))
        if tuple(variables[name].shape) != tuple(np.shape(weights[name]))
    ]
    if missing or unexpected or mismatched:
        problems = []
        if missing:
            problems.append(f"missing variables ({len(missing)}): {missing}")
        if unexpected:
            problems.append(
                f"unexpected variables ({len(unexpected)}): {unexpected}"
            )
        if mismatched:
            problems.append(f"wrong shapes ({len(mismatched)}): {mismatched}")
        raise ValueError(
            f"Cannot load {source}: " + "; ".join(problems) + "."
        )
    for name, variable in variables.items():
        variable.assign(np.asarray(weights[name], dtype=variable.dtype))


def set_backbone_weights(backbone, weights, source="the source checkpoint"):
    """Loads {TF1 name: array} into `backbone`; all or nothing."""
    set_model_weights(backbone, weights, source)
