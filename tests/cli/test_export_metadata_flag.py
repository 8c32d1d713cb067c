"""`export --format=tflite --metadata/--nometadata`: on by default for
classifiers with label names, refused where it cannot apply.

TensorFlow only (TFLite export); skipped without it.
"""

import importlib.util
import io
import zipfile

import numpy as np
import pytest

pytest.importorskip("tensorflow", reason="TFLite export is TensorFlow's")

import keras_albert  # noqa: E402
from keras_albert.cli.main import main  # noqa: E402
from keras_albert.export import tflite_metadata  # noqa: E402


def _preset(directory, tokenizer, config, label_names):
    classifier = keras_albert.AlbertClassifier(
        keras_albert.AlbertBackbone(**dict(config, vocabulary_size=80)),
        num_classes=3, label_names=label_names,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
    )
    kernel = classifier.output_dense.kernel
    kernel.assign(np.random.default_rng(0).normal(0, 2.0, kernel.shape))
    classifier.save_to_preset(str(directory))
    return directory


@pytest.fixture(scope="module")
def presets(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    root = tmp_path_factory.mktemp("presets")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    named = _preset(root / "named", tokenizer, tiny_backbone_config, ["cat", "dog", "fish"])
    unnamed = _preset(root / "unnamed", tokenizer, tiny_backbone_config, None)
    return named, unnamed


def _error(capsys, arguments):
    code = main(["export", *arguments])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    return err


def test_metadata_where_it_cannot_apply_is_refused(tmp_path, presets, capsys, monkeypatch):
    named, unnamed = presets
    output = f"--output={tmp_path / 'm.tflite'}"
    err = _error(capsys, [f"--preset={named}", "--format=tflite", "--raw_strings", "--metadata", output])
    assert "token-input TFLite" in err
    err = _error(capsys, [f"--preset={named}", "--format=saved_model", "--metadata", f"--output={tmp_path / 'sm'}"])
    assert "token-input TFLite" in err
    # Asked for on a classifier without class names: named in the error.
    err = _error(capsys, [f"--preset={unnamed}", "--format=tflite", "--metadata", output])
    assert "label_names" in err and "--nometadata" in err
    # On by default for a named classifier: without MediaPipe, the error
    # names the extra (and --nometadata) before any conversion.
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        tflite_metadata.importlib.util, "find_spec",
        lambda name, *args: None if name == "mediapipe" else find_spec(name, *args),
    )
    err = _error(capsys, [f"--preset={named}", "--format=tflite", output])
    assert "keras-albert[tflite-metadata]" in err and "--nometadata" in err
    assert list(tmp_path.iterdir()) == []


def _files(path):
    try:
        return sorted(zipfile.ZipFile(io.BytesIO(path.read_bytes())).namelist())
    except zipfile.BadZipFile:
        return []


@pytest.mark.large
def test_default_is_on_for_named_classifiers_and_off_otherwise(tmp_path, presets, capsys):
    from keras_albert.export.tflite_export import run_tflite

    named, unnamed = presets
    features = {name: np.ones([1, 16], "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    for preset, flag, files, output in [
        (named, None, ["labels.txt", "sentencepiece.model"], "probabilities"),
        (named, "--nometadata", [], "logits"),
        (unnamed, None, [], "logits"),
    ]:
        path = tmp_path / f"{preset.name}{flag or ''}.tflite"
        arguments = [f"--preset={preset}", "--format=tflite", f"--output={path}"] + ([flag] if flag else [])
        assert main(["export", *arguments]) == 0, capsys.readouterr().err
        assert _files(path) == files, arguments
        assert list(run_tflite(path.read_bytes(), features)) == [output], arguments
