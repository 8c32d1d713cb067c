"""labels.txt holds one class name per line: names that would break a line
are refused where they are set, with the name shown, and the file reads
back exactly what was written.

Runs on every backend; the publishing case needs TensorFlow (it skips
without it):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/utils/test_label_file.py
"""

import pytest

from keras_albert.utils.label_file import check_label_lines
from keras_albert.utils.label_file import read_label_file
from keras_albert.utils.label_file import write_label_file

BREAKING = ["calm\nsea", "a\r", "form\ffeed", "line\u2028separator", "para\u2029graph",
            "next\x85line", "vertical\x0btab", "tab\tinside", "nul\x00"]


@pytest.mark.parametrize("label", BREAKING)
def test_a_name_that_breaks_a_line_is_refused_and_shown(tmp_path, label):
    with pytest.raises(ValueError) as error:
        write_label_file(tmp_path, ["fine", label])
    message = str(error.value)
    assert repr(label) in message and "class 1" in message and "U+" in message
    assert "\n" not in message
    assert not (tmp_path / "labels.txt").exists()


def test_names_round_trip(tmp_path):
    names = ["negative", "positive", "très bien", "中性", " spaced "]
    write_label_file(tmp_path, names)
    assert read_label_file(tmp_path) == names


def test_reading_splits_on_line_feeds_only(tmp_path):
    (tmp_path / "labels.txt").write_bytes(b"a\r\nb\r\n")  # a file saved on Windows
    assert read_label_file(tmp_path) == ["a", "b"]
    (tmp_path / "labels.txt").write_text("a\u2028b\nc\n", encoding="utf-8")
    with pytest.raises(ValueError, match="labels.txt.*LINE SEPARATOR"):
        read_label_file(tmp_path)


def test_check_returns_the_names():
    assert check_label_lines(["x", "y"]) == ["x", "y"]


def test_publish_refuses_a_name_with_a_line_break(tmp_path):
    pytest.importorskip("tensorflow", reason="publishing is TensorFlow's")
    from keras_albert.publishing.publisher import publish_preset

    with pytest.raises(ValueError) as error:
        publish_preset("albert_tiny_en_student_supersense", tmp_path / "out", exports=(),
                       label_names=_supersense_names_with("calm\nsea"))
    assert "'calm\\nsea'" in str(error.value)
    assert not (tmp_path / "out").exists()


def _supersense_names_with(bad):
    from keras_albert.convert.converted_preset import task_config
    from keras_albert.presets.preset_resolution import resolve_preset

    names = list(task_config(resolve_preset("albert_tiny_en_student_supersense"))[1]["label_names"])
    return [bad] + names[1:]


@pytest.mark.parametrize("suffix, content", [
    (".csv", 'text,label\nquiet water,"calm\nsea"\nbig waves,storm\n'),
    (".jsonl", '{"text": "quiet water", "label": "calm\\u2028sea"}\n{"text": "waves", "label": "storm"}\n'),
])
def test_finetune_refuses_labels_that_break_a_line(tmp_path, suffix, content):
    from keras_albert.pipelines import FinetuneSettings
    from keras_albert.pipelines import run_finetuning

    train = tmp_path / f"train{suffix}"
    train.write_text(content, encoding="utf-8")
    settings = FinetuneSettings(preset="albert_tiny_en", task="classification", train=str(train),
                                eval=str(train), output=str(tmp_path / "run"))
    with pytest.raises(ValueError) as error:
        run_finetuning(settings)
    message = str(error.value)
    assert "--train" in message and "'calm" in message and "class 0" in message
    assert "\n" not in message.replace("\\n", "")
    assert not (tmp_path / "run").exists()
