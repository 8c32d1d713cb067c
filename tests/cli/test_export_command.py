"""`python -m keras_albert export` in every format, and its bad inputs.

Export is TensorFlow's: the exports skip without it, and bad inputs the
flags alone show are refused on every backend; past them the command
answers the one-line "needs TensorFlow" error:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_export_command.py
"""

import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.cli.main import main
from keras_albert.utils.backend import tensorflow_available
from tests.cli.progress_lines import assert_steps_shown

needs_tensorflow = pytest.mark.skipif(not tensorflow_available(), reason="export is TensorFlow's")
NO_TENSORFLOW = "needs TensorFlow, which is not installed"


@pytest.fixture(scope="module")
def task_preset(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    path = tmp_path_factory.mktemp("task") / "preset"
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    keras.utils.set_random_seed(0)  # int8 agreement depends on the draw (see test_raw_string_tflite)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80))
    classifier = keras_albert.AlbertClassifier(
        backbone, num_classes=3,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
    )
    # Decided argmaxes, as in a trained model, so int8 checks are meaningful.
    classifier.output_dense.kernel.assign(
        np.random.default_rng(0).normal(0, 2.0, classifier.output_dense.kernel.shape)
    )
    classifier.predict(["warm up"], verbose=0)
    classifier.save_to_preset(str(path))
    return path, classifier


@pytest.mark.large
@needs_tensorflow
def test_every_format(tmp_path, task_preset, capsys):
    path, classifier = task_preset
    assert main(["export", f"--preset={path}", "--format=saved_model", f"--output={tmp_path / 'sm'}"]) == 0
    assert_steps_shown(capsys.readouterr().out, [
        "Loading", "Tracing the serving signature", "Writing the SavedModel", "Checking the SavedModel"])
    # `saved_model_cli run`, in its own process (tensorflow_text imported
    # first: the SentencePiece op lives there), gives the Keras logits.
    script = (
        "import sys, tensorflow_text; from tensorflow.python.tools import saved_model_cli; "
        "sys.argv = ['saved_model_cli'] + sys.argv[1:]; saved_model_cli.main()"
    )
    subprocess.run(
        [sys.executable, "-c", script, "run", "--dir", str(tmp_path / "sm"), "--tag_set", "serve",
         "--signature_def", "serving_default", "--input_exprs", 'text=["the cat sleeps"]',
         "--outdir", str(tmp_path / "cli_out")],
        capture_output=True, text=True, check=True,
    )
    served = np.load(tmp_path / "cli_out" / "logits.npy")
    np.testing.assert_allclose(served, classifier.predict(["the cat sleeps"], verbose=0), atol=1e-5)

    assert main(["export", f"--preset={path}", "--format=tflite", "--quantize=dynamic",
                 "--sequence_length=16", f"--output={tmp_path / 'model.tflite'}"]) == 0
    assert_steps_shown(capsys.readouterr().out, [
        "Loading", "Converting to TFLite (quantize=dynamic, sequence_length=16)",
        "Checking the TFLite model against Keras on 4 texts", "Writing"])
    assert (tmp_path / "model.tflite").stat().st_size > 0
    assert main(["export", f"--preset={path}", "--format=tflite", "--raw_strings",
                 "--sequence_length=16", f"--output={tmp_path / 'text.tflite'}"]) == 0
    from keras_albert.export.raw_string_tflite import run_raw_string_tflite

    logits = run_raw_string_tflite((tmp_path / "text.tflite").read_bytes(), ["the cat sleeps"])["logits"]
    np.testing.assert_allclose(logits, served, atol=1e-4)
    assert main(["export", f"--preset={path}", "--format=tfhub", f"--output={tmp_path / 'hub'}"]) == 0
    assert_steps_shown(capsys.readouterr().out, [
        "Loading", "Writing the TF-Hub encoder", "Writing the TF-Hub preprocessor", "Checking the encoder"])
    assert (tmp_path / "hub" / "encoder" / "saved_model.pb").is_file()
    assert (tmp_path / "hub" / "preprocessor" / "saved_model.pb").is_file()


def test_bad_inputs_exit_2(tmp_path, task_preset, capsys):
    path, _ = task_preset
    backbone_only = tmp_path / "backbone"
    keras_albert.AlbertBackbone.from_preset(str(path)).save_to_preset(str(backbone_only))
    (tmp_path / "file").write_text("x")
    # Without TensorFlow, what only the export finds is that it is needed.
    past_flags = (lambda message: message) if tensorflow_available() else (lambda message: NO_TENSORFLOW)
    cases = [
        ([f"--preset={backbone_only}", "--format=saved_model", f"--output={tmp_path / 'o'}"],
         past_flags("holds no task")),
        ([f"--preset={path}", "--format=tflite", "--calibration_texts=c.txt", f"--output={tmp_path / 'o.tflite'}"],
         "--calibration_texts"),
        ([f"--preset={path}", "--format=tflite", "--sequence_length=999", f"--output={tmp_path / 'o.tflite'}"],
         past_flags("sequence_length")),
        ([f"--preset={path}", "--format=saved_model", f"--output={tmp_path / 'file'}"], past_flags("is a file")),
        ([f"--preset={path}", "--format=saved_model", "--quantize=dynamic", f"--output={tmp_path / 'o'}"], "tflite only"),
    ]
    for arguments, message in cases:
        assert main(["export", *arguments]) == 2, arguments
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.tflite").exists()


def test_too_few_int8_texts_are_named_by_their_flags(tmp_path, task_preset, capsys):
    path, _ = task_preset
    (tmp_path / "six.txt").write_text("".join(f"text number {i}\n" for i in range(6)))
    # Without TensorFlow, what only the export finds is that it is needed.
    past_flags = (lambda message: message) if tensorflow_available() else (lambda message: NO_TENSORFLOW)
    for flag, message in (
        ("--texts", "`--texts` holds 6 texts that are not calibration texts"),
        ("--calibration_texts", "`--calibration_texts` holds 6 texts"),
    ):
        assert main(["export", f"--preset={path}", "--format=tflite", "--quantize=int8",
                     f"{flag}={tmp_path / 'six.txt'}", f"--output={tmp_path / 'o.tflite'}"]) == 2
        error = capsys.readouterr().err
        assert past_flags(message) in error
        if tensorflow_available():
            assert f"leave {flag} out" in error and "_texts=None" not in error
    assert not (tmp_path / "o.tflite").exists()


@pytest.mark.large
@needs_tensorflow
def test_tfhub_export_of_a_named_classifier_keeps_its_labels(
    tmp_path, sentencepiece_proto, tiny_backbone_config
):
    # The CLI loads a classifier with class names whole (not its backbone
    # alone), so labels.txt travels with the TF-Hub modules.
    names = ["noun.animal", "noun.artifact", "noun.feeling"]
    classifier = keras_albert.AlbertClassifier(
        keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80)),
        num_classes=3, label_names=names,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(
            keras_albert.AlbertTokenizer(proto=sentencepiece_proto), sequence_length=16),
    )
    classifier.predict(["warm up"], verbose=0)
    classifier.save_to_preset(str(tmp_path / "preset"))
    assert main(["export", f"--preset={tmp_path / 'preset'}", "--format=tfhub",
                 f"--output={tmp_path / 'hub'}"]) == 0
    assert (tmp_path / "hub" / "labels.txt").read_text(encoding="utf-8").split() == names
