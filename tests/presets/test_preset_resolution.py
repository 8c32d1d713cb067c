import time

import numpy as np
import pytest

import keras_albert
from keras_albert.presets import preset_resolution
from tests.harness import run_preset_round_trip


def _inputs():
    return {
        "token_ids": np.array([[2, 10, 11, 3, 0]], "int32"),
        "segment_ids": np.zeros((1, 5), "int32"),
        "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32"),
    }


def test_backbone_preset_round_trip(tmp_path, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, num_groups=2))
    run_preset_round_trip(backbone, tmp_path / "preset", _inputs(), atol=0)


def test_unknown_name_lists_known_presets():
    with pytest.raises(ValueError) as error:
        keras_albert.AlbertBackbone.from_preset("albert_gigantic_en")
    message = str(error.value)
    assert "albert_gigantic_en" in message
    for name in keras_albert.OFFICIAL_PRESETS:
        assert name in message


@pytest.mark.parametrize(
    "name", ["albert_base_en_uncased", "albert-large-v2", "albert/albert-xxlarge-v2"]
)
def test_remote_name_without_network_fails_fast(monkeypatch, name):
    # Tests never touch the network: the probe is replaced by one that says
    # the host is unreachable, as it is on an offline machine.
    monkeypatch.setattr(preset_resolution, "network_available", lambda host: False)
    start = time.monotonic()
    with pytest.raises(ConnectionError) as error:
        keras_albert.AlbertBackbone.from_preset(name)
    assert time.monotonic() - start < 5
    message = str(error.value)
    assert "network access" in message
    assert "local directory" in message
    assert "kaggle://keras/albert/keras/" in message


def test_network_probe_times_out_quickly():
    # Loopback only (tests never dial out): nothing listens on 127.0.0.1:443
    # here, so the probe must answer False within its timeout.
    start = time.monotonic()
    assert preset_resolution.network_available("127.0.0.1", timeout=1.0) is False
    assert time.monotonic() - start < 3


def test_directory_without_config_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="no config.json"):
        keras_albert.AlbertBackbone.from_preset(str(tmp_path))


def test_file_instead_of_directory_is_rejected(tmp_path):
    path = tmp_path / "weights.h5"
    path.write_bytes(b"x")
    with pytest.raises(ValueError, match="is a file"):
        keras_albert.AlbertBackbone.from_preset(str(path))


def test_non_string_preset_is_rejected():
    with pytest.raises(ValueError, match="preset"):
        keras_albert.AlbertBackbone.from_preset(42)


def test_bundled_presets_resolve_offline(tmp_path, monkeypatch, tiny_backbone_config):
    monkeypatch.setenv("KERAS_ALBERT_PRESETS_DIR", str(tmp_path))
    keras_albert.AlbertBackbone(**tiny_backbone_config).save_to_preset(
        str(tmp_path / "albert_mini_en")
    )
    monkeypatch.setattr(preset_resolution, "network_available", lambda host: pytest.fail("dialed"))
    assert "albert_mini_en" in keras_albert.list_presets()
    restored = keras_albert.AlbertBackbone.from_preset("albert_mini_en")
    assert restored.num_layers == tiny_backbone_config["num_layers"]
