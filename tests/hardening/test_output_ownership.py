"""Outputs never destroy what the user put there.

Each case is a hostile or careless user: a project folder that happens to
hold a config.json given as --dst, notes and a .git added to an earlier
export and then the same command run again, a run directory that already
holds the user's metrics.json. The tool replaces only files it wrote
(listed in the directory's marker) and refuses, naming them, the rest.

Runs on every backend, TensorFlow installed or not; the export and
publishing cases (TensorFlow's) are in test_export_output_ownership.py:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_output_ownership.py
"""

import json
import os

import pytest

from keras_albert.cli.main import main
from keras_albert.utils import atomic_directory as atomic
from tests.hardening.conftest import assert_names


def _tree(directory):
    return sorted(
        str(p.relative_to(directory)) for p in directory.rglob("*") if not p.is_dir()
    )


def _project(path):
    """A user's folder that is no model: a config.json among other files."""
    (path / "src").mkdir(parents=True)
    (path / "config.json").write_text('{"debug": true}')
    (path / "src" / "main.py").write_text("print('hello')\n")
    (path / "data.csv").write_text("a,b\n1,2\n")
    return _tree(path)


@pytest.mark.entry_point("outputs")
def test_convert_to_hf_refuses_a_project_folder_with_a_config_json(classifier_preset, tmp_path, capsys):
    before = _project(tmp_path / "project")
    status = main(["convert", "--from=keras_albert", "--to=hf", f"--src={classifier_preset}",
                   f"--dst={tmp_path / 'project'}"])
    stderr = capsys.readouterr().err
    assert status == 2, stderr
    assert_names(stderr, "--dst", "project", "config.json", "--overwrite")
    assert _tree(tmp_path / "project") == before
    assert (tmp_path / "project" / "config.json").read_text() == '{"debug": true}'


@pytest.mark.entry_point("outputs")
def test_convert_to_hf_again_keeps_what_the_user_added(classifier_preset, tmp_path, capsys):
    dst = tmp_path / "hf"
    argv = ["convert", "--from=keras_albert", "--to=hf", f"--src={classifier_preset}", f"--dst={dst}"]
    assert main(argv) == 0
    (dst / "README.md").write_text("my model card")
    (dst / ".git").mkdir()
    (dst / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert main(argv) == 0, capsys.readouterr().err
    assert (dst / "README.md").read_text() == "my model card"
    assert (dst / ".git" / "HEAD").exists()
    assert (dst / "model.safetensors").exists()


@pytest.mark.entry_point("outputs")
def test_publish_refuses_to_replace_a_users_file_of_the_same_name(tmp_path):
    out = tmp_path / "published"
    with atomic.atomic_directory(out, "published_model") as staging:
        (open(os.path.join(staging, "README.md"), "w")).write("card")
    (out / "labels.txt").write_text("mine\n")
    with pytest.raises(ValueError) as error:
        with atomic.atomic_directory(out, "published_model") as staging:
            (open(os.path.join(staging, "labels.txt"), "w")).write("a\n")
    assert_names(error, "labels.txt", "did not write", "--overwrite")
    assert (out / "labels.txt").read_text() == "mine\n"


def _finetune_settings(tmp_path, output):
    from keras_albert.pipelines import FinetuneSettings

    (tmp_path / "train.tsv").write_text("text\tlabel\na cat\tpet\na wolf\twild\n")
    return FinetuneSettings(preset="albert_tiny_en", task="classification",
                            train=str(tmp_path / "train.tsv"), eval=str(tmp_path / "train.tsv"),
                            output=str(output))


@pytest.mark.entry_point("outputs")
@pytest.mark.parametrize("name", ["metrics.json", "curves.png"])
def test_finetune_refuses_an_output_holding_the_users_file(tmp_path, name):
    from keras_albert.pipelines.finetuning import check_finetune_settings

    output = tmp_path / "run"
    output.mkdir()
    (output / name).write_bytes(b"the user's")
    (output / "notes.txt").write_text("unrelated: fine")
    with pytest.raises(ValueError) as error:
        check_finetune_settings(_finetune_settings(tmp_path, output))
    assert_names(error, "--output", str(output), name, "no earlier run")
    assert (output / name).read_bytes() == b"the user's"


@pytest.mark.entry_point("outputs")
def test_finetune_takes_back_its_own_run_directory(tmp_path):
    from keras_albert.pipelines.finetuning import check_finetune_settings
    from keras_albert.utils.run_directory import record_run_outputs

    output = tmp_path / "run"
    output.mkdir()
    record_run_outputs(output, ["metrics.json", "curves.png"])
    (output / "metrics.json").write_text("{}")
    check_finetune_settings(_finetune_settings(tmp_path, output))
    # A run written before runs were recorded, known by its own record.
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "metrics.json").write_text(json.dumps({"best": {}, "selection_metric": "x", "history": []}))
    check_finetune_settings(_finetune_settings(tmp_path, legacy))
    assert "metrics.json" in json.loads((legacy / atomic.MARKER_FILE).read_text())["files"]


@pytest.mark.entry_point("outputs")
def test_finetune_refuses_an_artifact_directory_as_its_output(tmp_path):
    from keras_albert.pipelines.finetuning import check_finetune_settings

    output = tmp_path / "preset"
    with atomic.atomic_directory(output) as staging:
        open(os.path.join(staging, "config.json"), "w").write("{}")
    with pytest.raises(ValueError) as error:
        check_finetune_settings(_finetune_settings(tmp_path, output))
    assert_names(error, "--output", "holds a preset", "not a training run")
    assert atomic.artifact_kind(output) == "preset"


@pytest.mark.entry_point("outputs")
@pytest.mark.parametrize("name", ["metrics.json", "vocabulary.spm", "curve.png", "curve.jsonl"])
def test_pretrain_refuses_an_output_holding_the_users_file(tmp_path, name):
    from keras_albert.pipelines.pretraining import PretrainingSettings
    from keras_albert.pipelines.pretraining import run_pretraining

    (tmp_path / "corpus.txt").write_text("a sentence.\nanother one.\n")
    output = tmp_path / "run"
    output.mkdir()
    (output / name).write_bytes(b"the user's")
    settings = PretrainingSettings(corpus=[str(tmp_path / "corpus.txt")], output=str(output))
    with pytest.raises(ValueError) as error:
        run_pretraining(settings)
    assert_names(error, "--output", name, "no earlier run")
    assert sorted(os.listdir(output)) == [name]
    assert (output / name).read_bytes() == b"the user's"


def test_pretraining_run_of_an_older_version_resumes(tmp_path):
    from keras_albert.pipelines.pretraining import DATA_SETTINGS
    from keras_albert.pipelines.pretraining import RUN_OUTPUTS
    from keras_albert.pipelines.pretraining import _pretraining_run
    from keras_albert.utils.run_directory import check_run_outputs

    output = tmp_path / "run"
    output.mkdir()
    (output / "settings.json").write_text(json.dumps({name: None for name in DATA_SETTINGS}))
    (output / "vocabulary.spm").write_bytes(b"spm")
    check_run_outputs(output, RUN_OUTPUTS, legacy=_pretraining_run)
    assert {"settings.json", "vocabulary.spm"} <= set(
        json.loads((output / atomic.MARKER_FILE).read_text())["files"])
