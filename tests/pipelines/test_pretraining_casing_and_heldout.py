"""What continued pretraining keeps and refuses: the preset's casing, and
held-out text that the training corpus would also read."""

import json
import shutil

import pytest

import keras_albert
from keras_albert.pipelines.pretraining import PretrainingSettings
from keras_albert.pipelines.pretraining import check_eval_corpus
from keras_albert.pipelines.pretraining import run_lowercase
from keras_albert.pipelines.pretraining import run_pretraining
from keras_albert.presets.preset_resolution import bundled_presets_dir
from tests.conftest import synthetic_sentences


def _corpus(path, seed):
    lines = synthetic_sentences(160, seed=seed)
    path.write_text("\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, 160, 8)) + "\n")
    return str(path)


def _cased_copy(tmp_path):
    """albert_tiny_en with a cased tokenizer (`"lowercase": false`)."""
    preset = tmp_path / "cased"
    shutil.copytree(bundled_presets_dir() / "albert_tiny_en", preset)
    for name in ("tokenizer.json", "preprocessor.json"):
        document = json.loads((preset / name).read_text())
        tokenizer = document["config"] if name == "tokenizer.json" else document["config"]["tokenizer"]["config"]
        tokenizer["lowercase"] = False
        (preset / name).write_text(json.dumps(document))
    return preset


def test_a_continued_run_takes_the_presets_casing(tmp_path):
    settings = PretrainingSettings(corpus=["c.txt"], output="o", init_preset=str(_cased_copy(tmp_path)))
    assert run_lowercase(settings) is False
    assert run_lowercase(PretrainingSettings(corpus=["c.txt"], output="o", init_preset="albert_tiny_en"))
    assert run_lowercase(PretrainingSettings(corpus=["c.txt"], output="o"))


@pytest.mark.large
def test_continuing_a_cased_preset_writes_a_cased_preset(tmp_path):
    settings = PretrainingSettings(
        corpus=[_corpus(tmp_path / "c.txt", seed=4)], output=str(tmp_path / "run"),
        init_preset=str(_cased_copy(tmp_path)), max_seq_length=32, max_predictions_per_seq=5,
        dupe_factor=1, num_shards=1, batch_size=4, train_steps=1, warmup_steps=1,
        checkpoint_every=1, strategy="cpu", jit_compile=False,
    )
    run_pretraining(settings)
    written = tmp_path / "run" / "preset"
    assert json.loads((written / "tokenizer.json").read_text())["config"]["lowercase"] is False
    assert keras_albert.AlbertTokenizer.from_preset(str(written)).lowercase is False


@pytest.mark.parametrize("corpus, eval_corpus", [
    (["{C}/*.txt"], ["{C}/persuasion.txt"]),
    (["{C}/emma.txt", "{C}/persuasion.txt"], ["{C}/../C/persuasion.txt"]),
    (["{C}/emma.txt", "{C}/p*.txt"], ["{C}/persuasion.txt", "{C}/held.txt"]),
])
def test_held_out_text_also_in_the_corpus_is_refused_before_any_work(tmp_path, corpus, eval_corpus):
    folder = tmp_path / "C"
    folder.mkdir()
    for name in ("emma.txt", "persuasion.txt", "held.txt.bak", "held.txt"):
        (folder / name).write_text("A sentence.\n")
    corpus, eval_corpus = ([p.replace("{C}", str(folder)) for p in patterns]
                           for patterns in (corpus, eval_corpus))
    settings = PretrainingSettings(corpus=corpus, eval_corpus=eval_corpus, output=str(tmp_path / "run"))
    with pytest.raises(ValueError) as error:
        run_pretraining(settings)
    message = str(error.value)
    assert "`eval_corpus`" in message and "persuasion.txt" in message and "`corpus`" in message
    assert not (tmp_path / "run").exists()


def test_separate_held_out_text_is_accepted(tmp_path):
    (tmp_path / "train.txt").write_text("a\n")
    (tmp_path / "held.txt").write_text("b\n")
    check_eval_corpus(PretrainingSettings(corpus=[str(tmp_path / "t*.txt")],
                                          eval_corpus=[str(tmp_path / "held.txt")], output="o"))
