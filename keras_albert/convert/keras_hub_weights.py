"""keras-hub's `AlbertBackbone` weights <-> Google's TF1 names.

keras-hub keeps attention kernels per head ([H, heads, head_dim] and
[heads, head_dim, H]); TF1 keeps them flat ([H, H]). keras-hub only has
`sharing="all"` with `num_layers % num_groups == 0`.
"""

import numpy as np

_ENCODER = "bert/encoder/transformer"


def _keras_hub_variables(backbone):
    """{TF1 name: (keras-hub variable, TF1 shape)}."""
    hidden = backbone.hidden_dim
    pairs = {
        "bert/embeddings/word_embeddings": backbone.token_embedding.embeddings,
        "bert/embeddings/token_type_embeddings": (
            backbone.segment_embedding.embeddings
        ),
        "bert/embeddings/position_embeddings": (
            backbone.position_embedding.position_embeddings
        ),
        "bert/embeddings/LayerNorm/gamma": backbone.embeddings_layer_norm.gamma,
        "bert/embeddings/LayerNorm/beta": backbone.embeddings_layer_norm.beta,
        "bert/encoder/embedding_hidden_mapping_in/kernel": (
            backbone.embeddings_projection.kernel
        ),
        "bert/encoder/embedding_hidden_mapping_in/bias": (
            backbone.embeddings_projection.bias
        ),
        "bert/pooler/dense/kernel": backbone.pooled_dense.kernel,
        "bert/pooler/dense/bias": backbone.pooled_dense.bias,
    }
    result = {name: (v, tuple(v.shape)) for name, v in pairs.items()}
    for group, inner_layers in enumerate(backbone.transformer_layers):
        for inner, block in enumerate(inner_layers):
            scope = f"{_ENCODER}/group_{group}/inner_group_{inner}"
            attention = block._self_attention_layer
            for part, layer in (
                ("query", attention._query_dense),
                ("key", attention._key_dense),
                ("value", attention._value_dense),
            ):
                result[f"{scope}/attention_1/self/{part}/kernel"] = (
                    layer.kernel,
                    (hidden, hidden),
                )
                result[f"{scope}/attention_1/self/{part}/bias"] = (
                    layer.bias,
                    (hidden,),
                )
            output = attention._output_dense
            result[f"{scope}/attention_1/output/dense/kernel"] = (
                output.kernel,
                (hidden, hidden),
            )
            result[f"{scope}/attention_1/output/dense/bias"] = (
                output.bias,
                (hidden,),
            )
            for tf1, layer in (
                ("LayerNorm", block._self_attention_layer_norm),
                ("LayerNorm_1", block._feedforward_layer_norm),
            ):
                for weight in ("gamma", "beta"):
                    variable = getattr(layer, weight)
                    result[f"{scope}/{tf1}/{weight}"] = (
                        variable,
                        tuple(variable.shape),
                    )
            for tf1, layer in (
                ("ffn_1/intermediate/dense", block._feedforward_intermediate_dense),
                (
                    "ffn_1/intermediate/output/dense",
                    block._feedforward_output_dense,
                ),
            ):
                for weight in ("kernel", "bias"):
                    variable = getattr(layer, weight)
                    result[f"{scope}/{tf1}/{weight}"] = (
                        variable,
                        tuple(variable.shape),
                    )
    return result


def keras_hub_backbone_weights(backbone):
    """Returns {TF1 name: numpy array} from a keras-hub `AlbertBackbone`."""
    return {
        name: np.reshape(variable.numpy(), shape)
        for name, (variable, shape) in _keras_hub_variables(backbone).items()
    }


def set_keras_hub_backbone_weights(backbone, weights):
    """Loads {TF1 name: array} into a keras-hub `AlbertBackbone`."""
    from keras_albert.convert.tf1_names import assign_named_weights

    targets = _keras_hub_variables(backbone)
    reshaped = {}
    for name, array in weights.items():
        if name in targets and np.size(array) == np.prod(targets[name][1]):
            array = np.reshape(array, tuple(targets[name][0].shape))
        reshaped[name] = array
    assign_named_weights(
        {name: variable for name, (variable, _) in targets.items()},
        reshaped,
        source="weights for keras-hub's AlbertBackbone",
    )


def keras_hub_config_to_ours(config):
    """Maps a keras-hub `AlbertBackbone` config to keras_albert arguments."""
    keys = (
        "vocabulary_size",
        "num_layers",
        "num_heads",
        "embedding_dim",
        "hidden_dim",
        "intermediate_dim",
        "num_groups",
        "num_inner_repetitions",
        "dropout",
        "max_sequence_length",
        "num_segments",
    )
    return {key: config[key] for key in keys if key in config}
