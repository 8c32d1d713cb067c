"""`pretrain --eval_seed`: the held-out instances stay the same across data seeds."""

import pathlib

import pytest

from keras_albert.data.sentencepiece_training import train_sentencepiece
from keras_albert.pipelines.pretraining import PretrainingSettings
from keras_albert.pipelines.pretraining import build_data
from keras_albert.pipelines.pretraining import eval_seed
from tests.conftest import synthetic_sentences


def _corpus(path, seed):
    lines = synthetic_sentences(120, seed=seed)
    path.write_text("\n\n".join("\n".join(lines[i:i + 6]) for i in range(0, 120, 6)) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval_seed")
    train, heldout = _corpus(root / "train.txt", 0), _corpus(root / "heldout.txt", 1)
    proto = train_sentencepiece(synthetic_sentences(400), 60)
    return root, train, heldout, proto


def _build(corpora, name, **overrides):
    root, train, heldout, proto = corpora
    settings = PretrainingSettings(
        corpus=[train], eval_corpus=[heldout], output=str(root / name),
        max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1, num_shards=1,
        **overrides,
    )
    train_files, eval_path = build_data(settings, proto, root / name / "data")
    return pathlib.Path(train_files[0]).read_bytes(), pathlib.Path(eval_path).read_bytes()


def test_fixed_eval_seed_keeps_heldout_instances_across_data_seeds(corpora):
    train_a, heldout_a = _build(corpora, "a", seed=1, eval_seed=7)
    train_b, heldout_b = _build(corpora, "b", seed=2, eval_seed=7)
    assert train_a != train_b  # other pairs and masks for training
    assert heldout_a == heldout_b  # the same held-out instances


def test_default_eval_seed_follows_the_data_seed(corpora):
    _, heldout_default = _build(corpora, "c", seed=4)
    _, heldout_explicit = _build(corpora, "d", seed=9, eval_seed=5)
    assert heldout_default == heldout_explicit
    assert eval_seed(PretrainingSettings(corpus=[], output="", seed=4)) == 5


@pytest.mark.parametrize("bad", ["7", 1.5, True])
def test_eval_seed_must_be_an_int(bad):
    with pytest.raises(ValueError, match=r"`eval_seed` must be an int or None. Received: eval_seed="):
        eval_seed(PretrainingSettings(corpus=[], output="", eval_seed=bad))
