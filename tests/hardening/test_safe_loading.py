"""Loading a preset, a PyTorch file or an archive runs no code of its author's choosing.

Every malicious file here would, if loaded unsafely, create a marker file;
each test asserts the load is refused with a clear error and the marker
never appears.
"""

import json
import shutil
import tarfile

import keras
import pytest

import keras_albert
from tests.hardening.conftest import assert_names


@pytest.fixture
def marker(tmp_path):
    return tmp_path / "PWNED"


def _preset_with(classifier_preset, tmp_path, name, config):
    preset = tmp_path / "malicious"
    shutil.copytree(classifier_preset, preset)
    (preset / name).write_text(json.dumps(config))
    return str(preset)


def _os_system(marker):
    return {"module": "os", "class_name": "system", "config": {"command": f"touch {marker}"}, "registered_name": None}


def _lambda_activation(marker, classifier_preset):
    config = json.loads((classifier_preset / "config.json").read_text())
    code = f"lambda x: (__import__('pathlib').Path({str(marker)!r}).touch(), x)[1]"
    config["config"]["activation"] = {"module": "keras.layers", "class_name": "Lambda",
                                      "config": {"function": {"class_name": "__lambda__", "config": {"value": code}}},
                                      "registered_name": None}
    return config


def _lambda_function(marker, classifier_preset):
    config = json.loads((classifier_preset / "config.json").read_text())
    config["config"]["activation"] = {"class_name": "__lambda__", "config": {"value": "4wEAAAAAAAAA"}}
    return config


def _registered_elsewhere(marker, classifier_preset):
    config = json.loads((classifier_preset / "config.json").read_text())
    config.update(module="evil_plugin", class_name="Evil", registered_name="evil_plugin>Evil")
    return config


def _keras_hub_name_with_foreign_module(marker, classifier_preset):
    config = json.loads((classifier_preset / "config.json").read_text())
    config["module"] = "subprocess"
    return config


def _tokenizer_reading_a_file(marker, classifier_preset):
    config = json.loads((classifier_preset / "tokenizer.json").read_text())
    config["config"]["proto"] = "/etc/passwd"
    return config


# (id, file, config maker, needles)
MALICIOUS = [
    ("os_system", "config.json", lambda m, p: _os_system(m), ["config.json", "module='os'", "keras_albert"]),
    ("lambda_layer", "config.json", _lambda_activation, ["config.json", "'Lambda'", "never deserialized"]),
    ("python_lambda", "config.json", _lambda_function, ["config.json", "'__lambda__'"]),
    ("class_registered_outside", "config.json", _registered_elsewhere, ["config.json", "'evil_plugin>Evil'", "keras_albert"]),
    ("foreign_module", "config.json", _keras_hub_name_with_foreign_module, ["config.json", "module='subprocess'"]),
    ("task_os_system", "task.json", lambda m, p: _os_system(m), ["task.json", "module='os'"]),
    ("tokenizer_proto_path", "tokenizer.json", _tokenizer_reading_a_file, ["tokenizer.json", "/etc/passwd", "assets/"]),
]


@pytest.fixture
def evil_class_registered(marker):
    # A class some other installed package registered with Keras: keras-hub
    # alone would instantiate it (it only checks the name is registered).
    @keras.saving.register_keras_serializable(package="evil_plugin")
    class Evil(keras.layers.Layer):
        def __init__(self, **kwargs):
            marker.touch()
            super().__init__(**kwargs)

    yield
    keras.saving.get_custom_objects().pop("evil_plugin>Evil", None)


@pytest.mark.entry_point("from_preset (malicious)")
@pytest.mark.parametrize("cls", [keras_albert.AlbertBackbone, keras_albert.AlbertClassifier, keras_albert.AlbertTokenizer], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name, make, needles", [case[1:] for case in MALICIOUS], ids=[case[0] for case in MALICIOUS])
def test_malicious_preset_is_refused(cls, name, make, needles, classifier_preset, tmp_path, marker, evil_class_registered):
    preset = _preset_with(classifier_preset, tmp_path, name, make(marker, classifier_preset))
    with pytest.raises(ValueError) as error:
        cls.from_preset(preset)
    assert_names(error, "Refusing to load", *needles)
    assert not marker.exists()


@pytest.fixture
def unsafe_deserialization_enabled():
    from keras.src.backend.common import global_state
    from keras.src.saving import serialization_lib

    previous = serialization_lib.in_safe_mode()
    keras.config.enable_unsafe_deserialization()
    yield
    global_state.set_global_attribute("safe_mode_saving", previous)


def test_refused_even_with_unsafe_deserialization_enabled(classifier_preset, tmp_path, marker, unsafe_deserialization_enabled):
    preset = _preset_with(classifier_preset, tmp_path, "config.json", _lambda_activation(marker, classifier_preset))
    with pytest.raises(ValueError) as error:
        keras_albert.AlbertBackbone.from_preset(preset)
    assert_names(error, "'Lambda'")
    assert not marker.exists()


def test_the_marker_would_appear_if_keras_hub_loaded_it(classifier_preset, marker, evil_class_registered):
    # Control: the registered class does run its code when deserialized, so
    # the refusals above are what keeps the marker away.
    config = _registered_elsewhere(marker, classifier_preset)
    config["config"] = {}
    keras.saving.deserialize_keras_object(config)
    assert marker.exists()


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.mark.entry_point("converters")
def test_pytorch_pickle_with_code_is_refused(tmp_path, marker):
    torch = pytest.importorskip("torch")
    directory = tmp_path / "hf"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({
        "model_type": "albert", "vocab_size": 30, "embedding_size": 8, "hidden_size": 16,
        "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
        "max_position_embeddings": 16, "type_vocab_size": 2, "hidden_act": "gelu_new",
    }))
    with open(directory / "pytorch_model.bin", "wb") as handle:
        torch.save({"weight": _Payload(marker)}, handle)
    from keras_albert.convert.huggingface import convert_huggingface

    with pytest.raises(ValueError) as error:
        convert_huggingface(str(directory), str(tmp_path / "out"))
    assert_names(error, "pytorch_model.bin", "weights_only=True")
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def _tarball(tmp_path, add):
    path = tmp_path / "release.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        add(tar, tmp_path)
    return path


def _member(tar, tmp_path, name, **fields):
    info = tarfile.TarInfo(name)
    for key, value in fields.items():
        setattr(info, key, value)
    data = b"x" if info.isfile() else b""
    info.size = len(data)
    import io

    tar.addfile(info, io.BytesIO(data))


ARCHIVES = [
    ("parent_path", lambda tar, tmp: _member(tar, tmp, "../PWNED"), ["'../PWNED'", "climbs out"]),
    ("absolute_path", lambda tar, tmp: _member(tar, tmp, "/tmp/PWNED"), ["'/tmp/PWNED'", "absolute path"]),
    ("symlink_out", lambda tar, tmp: _member(tar, tmp, "albert/link", type=tarfile.SYMTYPE, linkname="../../etc"), ["albert/link", "symbolic link", "hold none"]),
    ("hardlink_out", lambda tar, tmp: _member(tar, tmp, "albert/hard", type=tarfile.LNKTYPE, linkname="/etc/passwd"), ["albert/hard", "hard link", "hold none"]),
    ("device", lambda tar, tmp: _member(tar, tmp, "albert/dev", type=tarfile.CHRTYPE), ["albert/dev", "device or FIFO"]),
]


@pytest.mark.entry_point("converters")
@pytest.mark.parametrize("add, needles", [case[1:] for case in ARCHIVES], ids=[case[0] for case in ARCHIVES])
def test_crafted_tarball_is_refused(tmp_path, add, needles):
    from keras_albert.convert.tf1_checkpoint import convert_tf1_checkpoint

    archive = _tarball(tmp_path, add)
    with pytest.raises(ValueError) as error:
        convert_tf1_checkpoint(str(archive), str(tmp_path / "out" / "preset"))
    assert_names(error, "Refusing to extract", "release.tar.gz", *needles)
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "out" / "preset").exists()
