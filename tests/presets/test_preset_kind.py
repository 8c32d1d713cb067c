"""presets/preset_kind.py: what a preset is, from its JSON files alone, so
the commands refuse a wrong preset before Keras is imported."""

import json
import pathlib

import pytest

from keras_albert.presets.preset_kind import bundled_presets
from keras_albert.presets.preset_kind import check_preset_known
from keras_albert.presets.preset_kind import check_preset_positions
from keras_albert.presets.preset_kind import local_preset_directory
from keras_albert.presets.preset_kind import preset_max_sequence_length


def _preset(directory, **config):
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps({"config": config}), encoding="utf-8")
    return directory


def test_known_presets_pass_and_others_are_named_with_what_is_known(tmp_path):
    for preset in ("albert_tiny_en", "albert_base_en_uncased", "albert-base-v2", "kaggle://me/albert/keras/x",
                   str(_preset(tmp_path / "mine", max_sequence_length=64)), tmp_path / "mine"):
        check_preset_known(preset)
    with pytest.raises(ValueError, match=r"^Unknown preset: preset='albert_tiny'\. .*'albert_tiny_en'"):
        check_preset_known("albert_tiny")
    with pytest.raises(ValueError, match="Unknown preset"):
        check_preset_known(str(tmp_path / "not_written_yet"))
    check_preset_known("")  # left to loading, which names an empty value


def test_the_bundled_presets_follow_keras_albert_presets_dir(tmp_path, monkeypatch):
    _preset(tmp_path / "private_preset", max_sequence_length=16)
    monkeypatch.setenv("KERAS_ALBERT_PRESETS_DIR", str(tmp_path))
    assert bundled_presets() == ("private_preset",)
    assert local_preset_directory("private_preset") == tmp_path / "private_preset"
    with pytest.raises(ValueError, match=r"Bundled presets \(offline\): \['private_preset'\]"):
        check_preset_known("albert_tiny_en")


def test_home_relative_and_path_like_presets(tmp_path, monkeypatch):
    _preset(tmp_path / "mine", max_sequence_length=64)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert local_preset_directory("~/mine") == tmp_path / "mine"
    assert local_preset_directory(pathlib.Path(tmp_path / "mine")) == tmp_path / "mine"
    check_preset_positions(pathlib.Path(tmp_path / "missing"), 512)  # loading names it


def test_positions_are_read_from_config_json(tmp_path):
    mine = _preset(tmp_path / "mine", max_sequence_length=64)
    assert preset_max_sequence_length(mine) == 64
    check_preset_positions(str(mine), 64)
    with pytest.raises(ValueError, match=r"^`--max` 65 is more than the 64 positions of preset .*Pass at most 64"):
        check_preset_positions(str(mine), 65, name="--max")
    (mine / "config.json").write_text("{not json", encoding="utf-8")
    assert preset_max_sequence_length(mine) is None
    check_preset_positions(str(mine), 10_000)  # loading says what is wrong with the file
    assert preset_max_sequence_length(_preset(tmp_path / "odd", max_sequence_length=True)) is None
