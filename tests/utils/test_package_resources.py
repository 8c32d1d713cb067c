"""Bundled files are found through importlib.resources, relative to the
imported package, and fail clearly when they cannot be."""

import importlib.resources
import os
import pathlib
import zipfile

import pytest

import keras_albert
from keras_albert.presets import preset_resolution
from keras_albert.utils import package_resources


def test_presets_are_found_in_the_imported_package_whatever_the_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KERAS_ALBERT_PRESETS_DIR", raising=False)
    directory = preset_resolution.bundled_presets_dir()
    assert directory == pathlib.Path(keras_albert.__file__).parent / "presets"
    assert "albert_tiny_en" in preset_resolution.bundled_presets()


def test_bundled_corpus_is_read_through_package_resources():
    with package_resources.open_package_file(
            "keras_albert.datasets", "data", "WORDNET_LICENSE") as handle:
        assert b"WordNet" in handle.read()


def test_missing_bundled_file_names_itself():
    with pytest.raises(FileNotFoundError, match="datasets/data/nope.txt.xz.*incomplete"):
        package_resources.open_package_file("keras_albert.datasets", "data", "nope.txt.xz")


def test_presets_not_on_the_file_system_are_refused_with_the_reason(tmp_path, monkeypatch):
    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("keras_albert/presets/albert_x/config.json", "{}")
    monkeypatch.setattr(importlib.resources, "files",
                        lambda package: zipfile.Path(archive, "keras_albert/presets/"))
    monkeypatch.delenv("KERAS_ALBERT_PRESETS_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="not on the file system"):
        package_resources.package_directory("keras_albert.presets")
    # Listing falls back to none rather than failing every error message.
    assert preset_resolution.bundled_presets() == ()


def test_environment_override_still_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_ALBERT_PRESETS_DIR", os.fspath(tmp_path))
    assert preset_resolution.bundled_presets_dir() == tmp_path
