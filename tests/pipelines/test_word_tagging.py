"""`predict` with a token classifier preset (what `finetune
--task=token_classification` writes): one label per whitespace word, by
name, None (TSV: `-`) for words the length cut; text pairs and `evaluate`
are refused in one line."""

import json

import pytest

import keras_albert
from keras_albert.cli.main import main
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


def test_pairs_and_evaluate_are_refused_in_one_line(tagger_preset, tmp_path, capsys):
    directory, _ = tagger_preset
    (tmp_path / "pairs.tsv").write_text("a\tb\nthe cat\ta dog\n", encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={tmp_path / 'pairs.tsv'}", "--text_columns=a",
                 "--text_columns=b", f"--output={tmp_path / 'rows.jsonl'}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("error: ") and "tags the words of single texts" in err[-1]
    assert not (tmp_path / "rows.jsonl").exists()
    (tmp_path / "data.tsv").write_text("text\tlabel\nthe cat\tO\n", encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'data.tsv'}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "holds AlbertTokenClassifier (its task.json); evaluate takes text classifiers" in err[-1]
