"""Task distillation's `--teacher` is checked before TensorFlow is imported
and before the student is loaded: a backbone is named as not a classifier
in one line, a missing path as missing."""

import json
import pathlib
import subprocess
import sys

import pytest

from keras_albert.pipelines.finetuning_settings import check_teacher_preset

ROOT = __file__.rsplit("/tests/", 1)[0]


def _finetune(tmp_path, teacher):
    (tmp_path / "train.tsv").write_text("text\tlabel\na cat\tpet\n")
    arguments = ["finetune", "--preset=albert_tiny_en_student", "--task=classification", "--train=train.tsv",
                 "--eval=train.tsv", "--output=out", f"--teacher={teacher}"]
    # `-X importtime` lists every module imported, on stderr.
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "keras_albert", *arguments],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60,
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "tensorflow" not in imported and "keras" not in imported
    assert not (tmp_path / "out").exists() and result.stdout == ""
    assert result.returncode == 2
    return [line for line in result.stderr.splitlines() if not line.startswith("import time:")]


def _backbone_preset(path):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"class_name": "AlbertBackbone", "config": {}}))
    return path


def test_a_backbone_teacher_is_named_not_a_classifier_before_tensorflow(tmp_path):
    _backbone_preset(tmp_path / "backbone")
    assert _finetune(tmp_path, "backbone") == [
        "error: `--teacher` 'backbone' is not a classifier: it is a backbone preset (no task.json). "
        "Give a classifier fine-tuned on the same labels, e.g. `finetune`'s OUTPUT/preset."]


def test_a_missing_teacher_is_named_before_tensorflow(tmp_path):
    (line,) = _finetune(tmp_path, "runs/teacher/preset")
    assert line.startswith("error: `--teacher` does not exist: 'runs/teacher/preset' (give a classifier preset")


@pytest.mark.parametrize("teacher, problem", [
    ("albert_tiny_en", "its task is AlbertPretrainer"),
    ("albert_tiny_en_student", "its task is AlbertMaskedLM"),
    ("albert_base_en_uncased", "it is one of Google's released backbones"),
])
def test_bundled_and_released_presets_that_are_not_classifiers(teacher, problem):
    with pytest.raises(ValueError, match=f"^`--teacher` '{teacher}' is not a classifier: {problem}\\. "):
        check_teacher_preset(teacher)


def test_classifier_teachers_pass(tmp_path):
    check_teacher_preset("albert_tiny_en_student_supersense")
    preset = _backbone_preset(tmp_path / "classifier")
    (preset / "task.json").write_text(json.dumps({"class_name": "AlbertClassifier", "config": {}}))
    check_teacher_preset(str(preset))
    # Hub handles are only known once downloaded: checked when loaded.
    check_teacher_preset("hf://someone/albert-classifier")


def test_a_damaged_task_file_is_named(tmp_path):
    preset = _backbone_preset(tmp_path / "damaged")
    (preset / "task.json").write_text("{not json")
    with pytest.raises(ValueError, match="task.json' is not JSON"):
        check_teacher_preset(str(preset))
    (pathlib.Path(tmp_path) / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file; a preset is a directory"):
        check_teacher_preset(str(tmp_path / "file"))
