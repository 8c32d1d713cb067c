"""Hugging Face GPT-2 -> AlbertCausalLM preset, with GPT-2's logits and
greedy tokens (random weights made here; every weight, LayerNorms and
biases included, drawn away from its initial value)."""

import json

import numpy as np
import pytest
import torch
import transformers

from keras_albert import AlbertCausalLM
from keras_albert.convert.huggingface import convert_huggingface
from keras_albert.pipelines.conversion import run_conversion

TOLERANCE = 1e-4


def gpt2(**overrides):
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=97, n_positions=24, n_embd=32, n_layer=3, n_head=4,
        **overrides,
    )
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.2)
    return model


def prompts():
    token_ids = np.array([[5, 17, 33, 2, 60, 9, 11, 70], [8, 41, 3, 0, 0, 0, 0, 0]], "int32")
    padding_mask = np.array([[1] * 8, [1, 1, 1, 0, 0, 0, 0, 0]], "int32")
    return token_ids, padding_mask


@pytest.mark.large
@pytest.mark.parametrize("activation", ["gelu_new", "gelu"])
def test_gpt2_converts_with_equal_logits(tmp_path, activation):
    model = gpt2(activation_function=activation)
    model.save_pretrained(tmp_path / "hf")
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    ours = AlbertCausalLM.from_preset(str(tmp_path / "preset"))
    backbone = ours.backbone
    assert (backbone.sharing, backbone.num_groups, backbone.normalize_first) == ("none", 3, True)
    assert backbone.embedding_dim == backbone.hidden_dim == 32

    token_ids, padding_mask = prompts()
    with torch.no_grad():
        theirs = model(
            input_ids=torch.tensor(token_ids, dtype=torch.long),
            attention_mask=torch.tensor(padding_mask, dtype=torch.long),
        ).logits.numpy()
    mine = np.asarray(ours({"token_ids": token_ids, "padding_mask": padding_mask}))
    real = padding_mask.astype(bool)
    assert np.abs(theirs[real] - mine[real]).max() <= TOLERANCE


@pytest.mark.large
def test_converted_gpt2_decodes_gpt2s_greedy_tokens(tmp_path):
    model = gpt2()
    model.save_pretrained(tmp_path / "hf")
    run_conversion("hf", "keras_albert", tmp_path / "hf", tmp_path / "preset")
    ours = AlbertCausalLM.from_preset(str(tmp_path / "preset"))
    ours.compile(sampler="greedy")
    prompt = [5, 17, 33, 2]
    with torch.no_grad():
        theirs = model.generate(
            torch.tensor([prompt]), max_length=16, do_sample=False,
            pad_token_id=0, eos_token_id=None,
        ).numpy()[0]
    packed = {
        "token_ids": np.array([prompt + [0] * 12], "int32"),
        "padding_mask": np.array([[1] * 4 + [0] * 12], "int32"),
    }
    for use_cache in (True, False):
        mine = np.asarray(ours.generate(packed, stop_token_ids=None, use_cache=use_cache)["token_ids"])[0]
        np.testing.assert_array_equal(mine, theirs)


def test_gpt2_options_it_cannot_compute_are_refused(tmp_path):
    model = gpt2(scale_attn_by_inverse_layer_idx=True)
    model.save_pretrained(tmp_path / "hf")
    with pytest.raises(ValueError, match="scale_attn_by_inverse_layer_idx=True") as error:
        convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    assert "\n" not in str(error.value)
    assert not (tmp_path / "preset").exists()


def test_untied_gpt2_head_is_refused(tmp_path):
    model = gpt2()
    model.save_pretrained(tmp_path / "hf")
    from safetensors.numpy import load_file
    from safetensors.numpy import save_file

    state = load_file(str(tmp_path / "hf" / "model.safetensors"))
    state["lm_head.weight"] = state["transformer.wte.weight"] + 1.0
    save_file(state, str(tmp_path / "hf" / "model.safetensors"))
    with pytest.raises(ValueError, match="lm_head.weight that differs from wte.weight"):
        convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    assert not (tmp_path / "preset").exists()
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["model_type"] == "gpt2"
