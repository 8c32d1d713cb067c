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


def _cache_as_kagglehub_would(cache, handle, preset, files):
    """Writes `preset` (a keras-hub preset) where kagglehub caches `handle`,
    with kagglehub's completion markers for `files`."""
    import shutil

    owner, model, framework, variation, version = handle.removeprefix("kaggle://").split("/")
    base = cache / "models" / owner / model / framework / variation
    shutil.copytree(preset, base / version)
    for name in files:
        marker = base / ".complete" / version / f"{name}.complete"
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


def test_official_name_loads_offline_from_kagglehubs_cache(monkeypatch, tmp_path):
    from keras_albert.convert import to_keras_hub_preset

    # What keras-hub leaves behind after loading albert_base_en_uncased once:
    # here the bundled weights in keras-hub's format, so outputs can be compared.
    to_keras_hub_preset("albert_tiny_en", tmp_path / "kh")
    handle = keras_albert.OFFICIAL_PRESETS["albert_base_en_uncased"]["kaggle_handle"]
    _cache_as_kagglehub_would(tmp_path / "kagglehub", handle, tmp_path / "kh",
                              ["config.json", "model.weights.h5"])
    monkeypatch.setenv("KAGGLEHUB_CACHE", str(tmp_path / "kagglehub"))
    monkeypatch.setenv("KERAS_ALBERT_CACHE", str(tmp_path / "ours"))
    monkeypatch.setattr(preset_resolution, "network_available", lambda host: pytest.fail("dialed"))
    loaded = keras_albert.AlbertBackbone.from_preset("albert_base_en_uncased")
    bundled = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    np.testing.assert_allclose(loaded(_inputs())["sequence_output"],
                               bundled(_inputs())["sequence_output"], atol=1e-6)


def test_a_partly_cached_official_preset_still_needs_the_network(monkeypatch, tmp_path):
    from keras_albert.convert import to_keras_hub_preset

    to_keras_hub_preset("albert_tiny_en", tmp_path / "kh")
    handle = keras_albert.OFFICIAL_PRESETS["albert_base_en_uncased"]["kaggle_handle"]
    # config.json complete, the weights not (a download that was stopped).
    _cache_as_kagglehub_would(tmp_path / "kagglehub", handle, tmp_path / "kh", ["config.json"])
    monkeypatch.setenv("KAGGLEHUB_CACHE", str(tmp_path / "kagglehub"))
    monkeypatch.setattr(preset_resolution, "network_available", lambda host: False)
    with pytest.raises(ConnectionError, match="network access"):
        keras_albert.AlbertBackbone.from_preset("albert_base_en_uncased")
