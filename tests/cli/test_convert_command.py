"""`python -m keras_albert convert`: every direction, and clear errors that
leave nothing behind.

Runs on every backend; writing a TF1 release needs TensorFlow, so that
round trip skips without it:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_convert_command.py
"""

import json

import numpy as np
import pytest
import transformers

import keras_albert
from keras_albert.cli.main import main
from keras_albert.convert.converted_preset import load_preset_model
from keras_albert.utils.backend import tensorflow_available
from tests.cli.progress_lines import assert_steps_shown
from tests.convert.hf_reference import TOLERANCE
from tests.convert.hf_reference import hf_model
from tests.convert.hf_reference import hf_outputs
from tests.convert.hf_reference import our_outputs
from tests.convert.test_tf1_checkpoint import write_release


@pytest.mark.large
@pytest.mark.skipif(not tensorflow_available(), reason="TF1 checkpoints are written and read with TensorFlow")
def test_tf1_to_keras_albert_to_hf_and_keras_hub(tmp_path, sentencepiece_proto, capsys):
    model = hf_model(groups=1, inner=1, layers=2)
    release = write_release(tmp_path / "release", model, sentencepiece_proto)
    assert main(["convert", "--from=tf1", f"--src={release}", f"--dst={tmp_path / 'ours'}"]) == 0
    out = capsys.readouterr().out
    assert "Wrote" in out
    assert_steps_shown(out, ["Reading the TF1 release", "Building the model and checking", "Writing the preset"])
    mine = our_outputs(load_preset_model(tmp_path / "ours"))
    assert np.abs(mine["mlm"] - hf_outputs(model)["mlm"]).max() <= TOLERANCE

    assert main([
        "convert", "--from=keras_albert", "--to=hf",
        f"--src={tmp_path / 'ours'}", f"--dst={tmp_path / 'hf'}",
    ]) == 0
    again = transformers.AlbertForPreTraining.from_pretrained(tmp_path / "hf").eval()
    assert np.abs(hf_outputs(again)["sop"] - hf_outputs(model)["sop"]).max() <= TOLERANCE
    assert (tmp_path / "hf" / "spiece.model").read_bytes() == sentencepiece_proto

    # Foreign to foreign goes through a temporary preset.
    assert main([
        "convert", "--from=hf", "--to=keras_hub",
        f"--src={tmp_path / 'hf'}", f"--dst={tmp_path / 'kh'}",
    ]) == 0
    config = json.loads((tmp_path / "kh" / "config.json").read_text())
    assert config["registered_name"] == "keras_hub>AlbertBackbone"


def test_export_to_hugging_face_shows_its_steps(tmp_path, sentencepiece_proto, tiny_backbone_config, capsys):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    backbone.save_to_preset(str(tmp_path / "ours"))
    tokenizer.save_to_preset(str(tmp_path / "ours"))
    assert main([
        "convert", "--from=keras_albert", "--to=hf", f"--src={tmp_path / 'ours'}", f"--dst={tmp_path / 'hf'}",
    ]) == 0
    out = capsys.readouterr().out
    assert_steps_shown(out, ["Loading the keras_albert preset", "Writing the Hugging Face model"])
    assert out.splitlines()[-1] == f"Wrote {tmp_path / 'hf'}"
    assert (tmp_path / "hf" / "model.safetensors").is_file()


def test_bad_inputs_exit_2_with_a_message_and_write_nothing(tmp_path, capsys):
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("not json")
    cases = [
        (["--from=hf", f"--src={tmp_path / 'hf'}"], "not valid JSON"),
        (["--from=hf", f"--src={tmp_path / 'missing'}"], "does not exist"),
        (["--from=tfhub", f"--src={tmp_path / 'hf'}", "--config=[1]"], "JSON object"),
        (["--from=hf", "--to=hf", f"--src={tmp_path / 'hf'}"], "nothing to convert"),
    ]
    for arguments, message in cases:
        code = main(["convert", *arguments, f"--dst={tmp_path / 'out'}"])
        assert code == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "out").exists()


def test_keras_albert_source_may_be_a_preset_name(tmp_path, capsys):
    # As every other command takes it: a bundled name needs no path.
    assert main(["convert", "--from=keras_albert", "--to=hf", "--src=albert_tiny_en",
                 f"--dst={tmp_path / 'hf'}"]) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["model_type"] == "albert"
