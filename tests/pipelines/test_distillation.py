"""`run_distillation(DistillationSettings(...))` called from Python.

Runs on every backend, TensorFlow installed or not (TFRecords on
TensorFlow, NumPy instances elsewhere; TensorBoard logs where TensorFlow's
summary writer is installed, a note where it is not):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/pipelines/test_distillation.py
"""

import dataclasses

import pytest

import keras_albert
from keras_albert.pipelines import DistillationSettings
from keras_albert.pipelines import run_distillation
from keras_albert.pipelines.pretraining_inputs import uses_tfrecords
from keras_albert.utils.backend import tensorflow_available
from tests.conftest import synthetic_sentences

STUDENT = {"num_layers": 1, "num_heads": 2, "embedding_dim": 4, "hidden_dim": 8, "intermediate_dim": 8}


@pytest.fixture(scope="module")
def settings(tmp_path_factory, sentencepiece_proto):
    teacher = tmp_path_factory.mktemp("teacher")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=16, max_sequence_length=32)
    keras_albert.AlbertMaskedLM(backbone).save_to_preset(str(teacher))
    tokenizer.save_to_preset(str(teacher))
    sentences = synthetic_sentences(100)
    corpus = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(sentences[i:i + 10]) for i in range(0, 100, 10)) + "\n")
    return DistillationSettings(
        teacher=str(teacher), student_config=STUDENT, corpus=[str(corpus)], output="",
        train_steps=2, log_every=1, batch_size=4, sequence_length=16,
        max_predictions_per_seq=3, dupe_factor=1, shuffle_buffer_size=32, jit_compile=False,
    )


@pytest.mark.large
def test_run_distillation_with_python_values_and_tensorboard_logs(settings, tmp_path, capsys):
    output = tmp_path / "run"
    # A dict student config and a dict layer map: no JSON strings needed.
    results = run_distillation(dataclasses.replace(settings, output=str(output), layer_map={0: 1}))
    assert [list(pair) for pair in results["layer_map"]] == [[0, 1]] and [s["stage"] for s in results["stages"]] == [None]
    student = keras_albert.AlbertBackbone.from_preset(results["preset"])
    assert student.hidden_dim == 8
    # The instances in the format this backend reads.
    (data,) = (output / "data").iterdir()
    assert data.suffix == (".tfrecord" if uses_tfrecords() else ".npz")
    if tensorflow_available():
        assert sorted((output / "logs" / "final").rglob("events.out.tfevents.*"))
    else:
        assert "TensorBoard logs: not written" in capsys.readouterr().out
        assert not (output / "logs").exists()


@pytest.mark.large
def test_tensorboard_off_writes_no_logs(settings, tmp_path):
    output = tmp_path / "run"
    run_distillation(dataclasses.replace(settings, output=str(output), tensorboard=False, train_steps=1))
    assert (output / "preset").is_dir() and not (output / "logs").exists()


@pytest.mark.parametrize("field, value, expected", [
    ("batch_size", 0, "`--batch_size` must be a positive integer. Received: 0"),
    ("strategy", "quantum", "`--strategy` must be one of"),
    ("temperature", 0.0, "`--temperature` must be > 0. Received: 0.0"),
    ("alpha", 1.5, "`--alpha` must be in [0, 1]. Received: 1.5"),
    ("warmup_steps", -1, "`--warmup_steps` must be >= 0. Received: -1"),
    ("layer_map", "[1, 2]", "`--layer_map` must be a JSON object"),
    ("layer_map", {"x": 1}, "`--layer_map` keys must be integers"),
])
def test_bad_settings_fail_before_the_teacher_is_loaded(settings, tmp_path, field, value, expected):
    bad = dataclasses.replace(
        settings, output=str(tmp_path / "run"), teacher=str(tmp_path / "no_teacher"), **{field: value})
    with pytest.raises(ValueError) as error:
        run_distillation(bad)
    assert expected in str(error.value)
    assert not (tmp_path / "run").exists()


def test_a_student_config_file_that_does_not_exist_is_named(settings, tmp_path):
    # It was parsed as inline JSON: "Expecting value", no word of a file.
    bad = dataclasses.replace(settings, output=str(tmp_path / "run"), student_config=str(tmp_path / "student.json"))
    with pytest.raises(FileNotFoundError, match=r"`student_config` file '.*student\.json' does not exist "
                                                r"\(or pass inline JSON\)\.$"):
        run_distillation(bad)
    assert not (tmp_path / "run").exists()
