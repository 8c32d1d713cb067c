"""`python -m keras_albert evaluate`: a JSON report on stdout or in a file,
and bad input refused in one line with nothing written."""

import json

import pytest

from keras_albert.cli.main import main
from tests.pipelines.tiny_classifier import LABELS
from tests.pipelines.tiny_classifier import animal_texts
from tests.pipelines.tiny_classifier import tiny_classifier
from tests.pipelines.tiny_classifier import write_table


@pytest.fixture(scope="module")
def trained(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    return tiny_classifier(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)


def test_report_on_stdout_and_in_a_file(trained, tmp_path, capsys):
    texts, labels = animal_texts(12, seed=9)
    write_table(tmp_path / "dev.tsv", texts, labels, header=("sentence", "animal"))
    arguments = ["evaluate", f"--preset={trained / 'preset'}", f"--data={tmp_path / 'dev.tsv'}",
                 "--text_columns=sentence", "--label_column=animal"]
    assert main(arguments) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert "Classifying 12 texts" in err  # the report alone on stdout
    assert report["examples"] == 12 and set(report["metrics"]) == {"accuracy", "f1_macro"}
    assert report["confusion_matrix"]["labels"] == list(LABELS)
    assert sum(map(sum, report["confusion_matrix"]["counts"])) == 12
    output = tmp_path / "scores" / "report.json"
    assert main(arguments + [f"--output={output}"]) == 0
    assert json.loads(output.read_text(encoding="utf-8")) == report
    assert main(arguments + [f"--output={output}"]) == 2
    assert "exists; pass --overwrite to replace it" in capsys.readouterr().err


def test_bad_input_is_one_line_and_writes_nothing(trained, tmp_path, capsys):
    write_table(tmp_path / "dev.tsv", ["a cat", "a dog"], ["cat", "dog"])
    (tmp_path / "texts.txt").write_text("a cat\n")
    (tmp_path / "empty.tsv").write_text("")
    preset, data = f"--preset={trained / 'preset'}", f"--data={tmp_path / 'dev.tsv'}"
    output = tmp_path / "out" / "report.json"
    cases = [
        ([preset, f"--data={tmp_path / 'missing.tsv'}"], "`--data` '{tmp}/missing.tsv' does not exist."),
        ([preset, f"--data={tmp_path / 'empty.tsv'}"], "`--data` '{tmp}/empty.tsv' is empty"),
        ([preset, f"--data={tmp_path / 'texts.txt'}"], "must be a labelled table: .tsv, .csv, .jsonl"),
        ([preset, data, "--label_column=gold"], "line 1: missing columns ['gold']; the header has ['text', 'label']"),
        ([preset, data], "holds labels the classifier does not know: ['dog']"),
        ([data], "Pass exactly one of `--preset`"),
        (["--preset=albert_tiny_en", data], "holds AlbertPretrainer (its task.json)"),
    ]
    for arguments, message in cases:
        assert main(["evaluate", *arguments, f"--output={output}"]) == 2, arguments
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert message.format(tmp=tmp_path) in err, (arguments, err)
        assert not output.parent.exists()
