"""Converters (keras_albert.convert) and exporters (keras_albert.export) with bad inputs.

Runs on every backend; the TF-Hub converter and the exporters are
TensorFlow's, so their cases skip without it:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_converter_exporter_inputs.py
"""

import json

import pytest

from keras_albert.convert.huggingface import convert_huggingface
from keras_albert.convert.keras_hub_preset import convert_keras_hub_preset
from keras_albert.convert.tf1_checkpoint import convert_tf1_checkpoint
from keras_albert.utils.backend import tensorflow_available
from tests.hardening.conftest import assert_names

needs_tensorflow = pytest.mark.skipif(not tensorflow_available(), reason="TF-Hub modules and exports are TensorFlow's")


def convert_tfhub_module(src, dst):
    from keras_albert.convert.tfhub_module import convert_tfhub_module

    return convert_tfhub_module(src, dst)


def export_serving_saved_model(*args, **kwargs):
    from keras_albert.export.serving_saved_model import export_serving_saved_model

    return export_serving_saved_model(*args, **kwargs)


def export_tflite(*args, **kwargs):
    from keras_albert.export.tflite_export import export_tflite

    return export_tflite(*args, **kwargs)

HF_CONFIG = {
    "model_type": "albert", "vocab_size": 30, "embedding_size": 8, "hidden_size": 16,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
    "max_position_embeddings": 16, "type_vocab_size": 2, "hidden_act": "gelu_new",
}


def _hf_dir(tmp, config=HF_CONFIG, files=None):
    directory = tmp / "hf"
    directory.mkdir()
    if config is not None:
        (directory / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    for name, data in (files or {}).items():
        (directory / name).write_bytes(data)
    return directory


def _index(shard):
    return json.dumps({"weight_map": {"embeddings.word_embeddings.weight": shard}}).encode()


# (id, converter, make src, needles)
CONVERTER_CASES = [
    ("hf_missing_dir", convert_huggingface, lambda t: t / "nope", FileNotFoundError, ["`src`", "nope"]),
    ("hf_no_config", convert_huggingface, lambda t: _hf_dir(t, config=None), FileNotFoundError, ["config.json", "not found"]),
    ("hf_config_not_json", convert_huggingface, lambda t: _hf_dir(t, config="{oops"), ValueError, ["config.json", "not valid JSON"]),
    ("hf_wrong_model_type", convert_huggingface, lambda t: _hf_dir(t, dict(HF_CONFIG, model_type="bert")), ValueError, ["model_type='bert'", "'albert'"]),
    ("hf_no_weights", convert_huggingface, lambda t: _hf_dir(t), FileNotFoundError, ["No weights", "model.safetensors"]),
    ("hf_corrupt_safetensors", convert_huggingface, lambda t: _hf_dir(t, files={"model.safetensors": b"\x00garbage"}), ValueError, ["model.safetensors", "Cannot read"]),
    ("hf_shard_outside_dir", convert_huggingface, lambda t: _hf_dir(t, files={"model.safetensors.index.json": _index("../../etc/passwd")}), ValueError, ["'../../etc/passwd'", "plain file names"]),
    ("tf1_missing", convert_tf1_checkpoint, lambda t: t / "nope.tar.gz", FileNotFoundError, ["`src`", "nope.tar.gz"]),
    ("tf1_not_a_tarball", convert_tf1_checkpoint, lambda t: _write(t / "x.tar.gz", b"not a tar"), ValueError, ["x.tar.gz", "not a readable tar archive"]),
    ("keras_hub_not_a_preset", convert_keras_hub_preset, lambda t: _hf_dir(t), ValueError, ["`src`", "not a keras-hub ALBERT preset", "keras_hub>AlbertBackbone"]),
    ("tfhub_not_saved_model", convert_tfhub_module, lambda t: _hf_dir(t), (ValueError, FileNotFoundError), ["hf"]),
]
NEED_TENSORFLOW = {"tfhub_not_saved_model"}


def _write(path, data):
    path.write_bytes(data)
    return path


@pytest.mark.entry_point("converters")
@pytest.mark.parametrize("convert, make, expected, needles", [
    pytest.param(*case[1:], id=case[0], marks=[needs_tensorflow] if case[0] in NEED_TENSORFLOW else [])
    for case in CONVERTER_CASES
])
def test_converter_refuses_bad_source(convert, make, expected, needles, tmp_path):
    with pytest.raises(expected) as error:
        convert(str(make(tmp_path)), str(tmp_path / "out"))
    assert_names(error, *needles)
    assert not (tmp_path / "out").exists()  # nothing half-written


@pytest.mark.entry_point("converters")
def test_converter_refuses_a_file_destination(tmp_path):
    (tmp_path / "taken").write_text("keep")
    with pytest.raises(ValueError) as error:
        convert_huggingface(str(_hf_dir(tmp_path)), str(tmp_path / "taken"))
    assert_names(error, "`dst`", "taken", "existing file")
    assert (tmp_path / "taken").read_text() == "keep"


# (id, call, needles)
EXPORTER_CASES = [
    ("saved_model_no_preprocessor", lambda c, t: export_serving_saved_model(_without_preprocessor(c), t / "s"), ["preprocessor=None"]),
    ("saved_model_path_is_file", lambda c, t: export_serving_saved_model(c, _write(t / "f", b"x")), ["`path`", "is a file"]),
    ("tflite_bad_quantize", lambda c, t: export_tflite(c, t / "m.tflite", quantize="int4"), ["`quantize`", "'int4'", "'dynamic'"]),
    ("tflite_sequence_too_long", lambda c, t: export_tflite(c, t / "m.tflite", sequence_length=999), ["`sequence_length`", "999", "[2, 32]"]),
    ("tflite_path_is_dir", lambda c, t: export_tflite(c, t), ["`path`", "is a directory", ".tflite"]),
]


def _without_preprocessor(classifier):
    import keras_albert

    return keras_albert.AlbertClassifier(classifier.backbone, num_classes=3)


@pytest.mark.entry_point("exporters")
@needs_tensorflow
@pytest.mark.parametrize("call, needles", [case[1:] for case in EXPORTER_CASES], ids=[case[0] for case in EXPORTER_CASES])
def test_exporter_refuses_bad_arguments(classifier, call, needles, tmp_path):
    with pytest.raises(ValueError) as error:
        call(classifier, tmp_path)
    assert_names(error, *needles)


@pytest.mark.entry_point("exporters")
@needs_tensorflow
def test_tfhub_export_refuses_an_unexportable_backbone(tmp_path):
    import keras_albert
    from keras_albert.export.tfhub_export import export_tfhub

    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=30, num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=16, sharing="none",
    )
    with pytest.raises(ValueError) as error:
        export_tfhub(backbone, b"", tmp_path / "hub")
    assert_names(error, "sharing='none'")
    assert not (tmp_path / "hub").exists()
