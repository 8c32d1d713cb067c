"""Random-weight Hugging Face ALBERT models and the outputs both sides give
for the same inputs; shared by the converter tests."""

import numpy as np
import torch
import transformers

TOLERANCE = 1e-4


def hf_model(groups, inner, layers=3, act="gelu_new", seed=0):
    torch.manual_seed(seed)
    config = transformers.AlbertConfig(
        vocab_size=90, embedding_size=8, hidden_size=16, num_hidden_layers=layers,
        num_hidden_groups=groups, inner_group_num=inner, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=20, hidden_act=act,
    )
    model = transformers.AlbertForPreTraining(config).eval()
    # Non-zero biases and LayerNorm params: zeros would hide mapping errors.
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name:
                param.add_(0.1 * torch.randn_like(param))
    return model


def inputs():
    token_ids = np.array([[2, 10, 11, 12, 13, 3, 0, 0], [2, 40, 41, 3, 50, 51, 52, 3]])
    padding = (token_ids != 0).astype("int32")
    padding[0, 5] = 1
    segments = np.array([[0] * 8, [0, 0, 0, 0, 1, 1, 1, 1]])
    return token_ids, segments, padding


def hf_outputs(model):
    token_ids, segments, padding = inputs()
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor(token_ids),
            token_type_ids=torch.tensor(segments),
            attention_mask=torch.tensor(padding),
            output_hidden_states=True,
        )
    return {
        "sequence": out.hidden_states[-1].numpy(),
        "mlm": out.prediction_logits.numpy(),
        "sop": out.sop_logits.numpy(),
    }


def our_outputs(pretrainer):
    token_ids, segments, padding = inputs()
    positions = np.tile(np.arange(8), (2, 1)).astype("int32")
    features = {
        "token_ids": token_ids.astype("int32"),
        "segment_ids": segments.astype("int32"),
        "padding_mask": padding,
        "mask_positions": positions,
    }
    out = pretrainer.predict(features, verbose=0)
    backbone = pretrainer.backbone.predict(
        {k: v for k, v in features.items() if k != "mask_positions"}, verbose=0
    )
    return {
        "sequence": backbone["sequence_output"],
        "pooled": backbone["pooled_output"],
        "mlm": out["mlm"],
        "sop": out["sentence_order"],
    }


def max_difference(a, b, padding):
    # Padded positions of the sequence output are not comparable (HF and
    # Google both compute them, but they carry no meaning).
    return np.abs((a - b) * padding[..., None]).max()


def saved_with_vocabulary(model, directory, proto):
    """`model` saved as a Hugging Face directory with `proto` as its
    spiece.model; returns the directory."""
    model.save_pretrained(directory)
    (directory / "spiece.model").write_bytes(proto)
    return directory
