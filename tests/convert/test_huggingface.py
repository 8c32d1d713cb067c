"""Hugging Face PyTorch ALBERT -> keras_albert preset -> Hugging Face, with
equal outputs at every step (random weights made here)."""

import json

import numpy as np
import pytest
import torch
import transformers

from keras_albert.convert.converted_preset import load_preset_model
from keras_albert.convert.huggingface import convert_huggingface
from keras_albert.convert.huggingface import export_huggingface
from tests.convert.hf_reference import TOLERANCE
from tests.convert.hf_reference import hf_model
from tests.convert.hf_reference import hf_outputs
from tests.convert.hf_reference import inputs
from tests.convert.hf_reference import max_difference
from tests.convert.hf_reference import our_outputs
from tests.convert.hf_reference import saved_with_vocabulary


@pytest.mark.large
@pytest.mark.parametrize("groups,inner", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_hugging_face_converts_with_equal_outputs(tmp_path, groups, inner):
    model = hf_model(groups, inner)
    model.save_pretrained(tmp_path / "hf")
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    ours = load_preset_model(tmp_path / "preset")
    theirs, mine = hf_outputs(model), our_outputs(ours)
    padding = inputs()[2]
    assert max_difference(theirs["sequence"], mine["sequence"], padding) <= TOLERANCE
    assert np.abs(theirs["mlm"] - mine["mlm"]).max() <= TOLERANCE
    assert np.abs(theirs["sop"] - mine["sop"]).max() <= TOLERANCE
    with torch.no_grad():
        pooled = model.albert(
            input_ids=torch.tensor(inputs()[0]),
            token_type_ids=torch.tensor(inputs()[1]),
            attention_mask=torch.tensor(padding),
        ).pooler_output.numpy()
    assert np.abs(pooled - mine["pooled"]).max() <= TOLERANCE

    # ... and back: Hugging Face loads our export and computes what it did.
    export_huggingface(ours, tmp_path / "back")
    again = transformers.AlbertForPreTraining.from_pretrained(tmp_path / "back").eval()
    for name, array in hf_outputs(again).items():
        assert np.abs(array - theirs[name]).max() <= 1e-5, name


def test_exact_gelu_is_kept_apart_from_the_tanh_form(tmp_path):
    model = hf_model(1, 1, act="gelu")
    model.save_pretrained(tmp_path / "hf")
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    config = json.loads((tmp_path / "preset" / "config.json").read_text())
    assert config["config"]["activation"] == "gelu"
    ours = load_preset_model(tmp_path / "preset")
    assert np.abs(hf_outputs(model)["mlm"] - our_outputs(ours)["mlm"]).max() <= TOLERANCE


def test_pytorch_bin_and_encoder_only_models_convert(tmp_path):
    model = hf_model(1, 1).albert
    # Older Hub checkpoints: a pickled state dict (transformers 5 no longer
    # writes one).
    model.config.save_pretrained(tmp_path / "hf")
    torch.save(model.state_dict(), tmp_path / "hf" / "pytorch_model.bin")
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    ours = load_preset_model(tmp_path / "preset")
    assert not hasattr(ours, "masked_lm_head")
    token_ids, segments, padding = inputs()
    with torch.no_grad():
        theirs = model(
            input_ids=torch.tensor(token_ids),
            token_type_ids=torch.tensor(segments),
            attention_mask=torch.tensor(padding),
        ).last_hidden_state.numpy()
    mine = ours.predict(
        {"token_ids": token_ids, "segment_ids": segments, "padding_mask": padding},
        verbose=0,
    )["sequence_output"]
    assert max_difference(theirs, mine, padding) <= TOLERANCE


def test_pickled_code_is_refused(tmp_path):
    (tmp_path / "hf").mkdir()
    model = hf_model(1, 1)
    model.config.save_pretrained(tmp_path / "hf")

    class Payload:
        def __reduce__(self):
            return (print, ("pwned",))

    torch.save({"x": Payload()}, tmp_path / "hf" / "pytorch_model.bin")
    with pytest.raises(ValueError, match="weights_only"):
        convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    assert not (tmp_path / "preset").exists()


def test_masked_lm_from_a_converted_preset_keeps_the_mlm_head(tmp_path, sentencepiece_proto):
    import keras_albert

    model = hf_model(1, 1)
    saved_with_vocabulary(model, tmp_path / "hf", sentencepiece_proto)
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    masked_lm = keras_albert.AlbertMaskedLM.from_preset(str(tmp_path / "preset"))
    pretrainer = load_preset_model(tmp_path / "preset")
    for a, b in zip(masked_lm.masked_lm_head.get_weights(), pretrainer.masked_lm_head.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        masked_lm.masked_lm_head.output_bias.numpy(), model.predictions.bias.detach().numpy()
    )


def test_casing_survives_both_directions(tmp_path, sentencepiece_proto, capsys):
    """A cased model stays cased: Hugging Face's do_lower_case in, and the
    preset's lowercase out (both were forced to uncased)."""
    import keras_albert
    from keras_albert.cli.main import main

    model = hf_model(1, 1)
    saved_with_vocabulary(model, tmp_path / "hf", sentencepiece_proto)
    (tmp_path / "hf" / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    assert keras_albert.AlbertTokenizer.from_preset(str(tmp_path / "preset")).lowercase is False
    assert main(["convert", "--from=keras_albert", "--to=hf", f"--src={tmp_path / 'preset'}",
                 f"--dst={tmp_path / 'back'}"]) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "back" / "tokenizer_config.json").read_text())["do_lower_case"] is False
