"""`predict` and `evaluate` with a token classifier preset (what `finetune
--task=token_classification` writes): one label per whitespace word, by
name, None (TSV: `-`) for words the length cut; a CoNLL file scored as
`finetune` scores it; text pairs and other files refused in one line."""

import json

import numpy as np
import pytest

import keras_albert
from keras_albert.cli.main import main
from keras_albert.data import task_metrics
from keras_albert.pipelines.word_tagging import format_tagged_rows

TAGS = ["B-PER", "I-PER", "O"]


@pytest.fixture(scope="module")
def tagger_preset(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=32)
    model = keras_albert.AlbertTokenClassifier(backbone, num_classes=3, preprocessor=preprocessor, label_names=TAGS)
    directory = tmp_path_factory.mktemp("tagger") / "preset"
    model.save_to_preset(str(directory))
    return directory, model


def test_each_word_gets_its_label_by_name_and_cut_words_none(tagger_preset, tmp_path, capsys):
    directory, model = tagger_preset
    texts = ["the cat sat on the mat", " ".join(["word"] * 40)]
    (tmp_path / "texts.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={tmp_path / 'texts.txt'}"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["text"] for row in rows] == texts
    assert [row["words"] for row in rows] == [text.split() for text in texts]
    expected = model.predict_word_labels([text.split() for text in texts])
    assert [row["labels"] for row in rows] == [[TAGS[i] if i >= 0 else None for i in ids] for ids in expected]
    # 40 words of at least one piece each do not fit 32 positions: the tail has no label.
    assert rows[1]["labels"][-1] is None and rows[1]["labels"][0] in TAGS
    tsv = format_tagged_rows(rows, "tsv").splitlines()
    assert tsv[0] == "text\tlabels" and tsv[2].split("\t")[1].split()[-1] == "-"
    assert len(tsv[1].split("\t")[1].split()) == 6


def test_pairs_are_refused_in_one_line(tagger_preset, tmp_path, capsys):
    directory, _ = tagger_preset
    (tmp_path / "pairs.tsv").write_text("a\tb\nthe cat\ta dog\n", encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={tmp_path / 'pairs.tsv'}", "--text_columns=a",
                 "--text_columns=b", f"--output={tmp_path / 'rows.jsonl'}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("error: ") and "tags the words of single texts" in err[-1]
    assert not (tmp_path / "rows.jsonl").exists()


def test_evaluate_scores_a_conll_file_as_finetune_does(tagger_preset, tmp_path, capsys):
    directory, model = tagger_preset
    sentences = [["Anne", "Lee", "walks"], ["the", "cat", "sat"], ["word"] * 40]
    tags = [["B-PER", "I-PER", "O"], ["O", "O", "O"], ["O"] * 40]
    (tmp_path / "dev").write_text(  # no suffix, as CoNLL-2003's own files
        "\n\n".join("\n".join(f"{w} {t}" for w, t in zip(words, row)) for words, row in zip(sentences, tags)) + "\n",
        encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'dev'}",
                 f"--output={tmp_path / 'report.json'}"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    predicted = model.predict_word_labels(sentences)
    true_ids = [TAGS.index(t) for row in tags for t in row]
    flat = [i for row in predicted for i in row]
    assert report["words"] == 46 and report["sentences"] == 3
    assert report["words_cut_by_length"] == flat.count(-1) > 0
    assert report["metrics"]["accuracy"] == pytest.approx(np.mean(np.asarray(flat) == np.asarray(true_ids)))
    assert report["metrics"]["entity_f1"] == task_metrics.entity_f1(
        [[TAGS[i] if i >= 0 else "O" for i in row] for row in predicted], tags)
    assert list(report["metrics"]) == ["entity_f1", "accuracy", "f1_macro"]
    assert sum(map(sum, report["confusion_matrix"]["counts"])) == 46 - report["words_cut_by_length"]

    # A tag the tagger does not know, or a table, names the line.
    (tmp_path / "bad.conll").write_text("Anne B-LOC\n", encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'bad.conll'}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "is not CoNLL columns for this tagger" in err[-1] and "label 'B-LOC' is not in the label set" in err[-1]
