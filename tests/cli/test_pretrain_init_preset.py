"""`pretrain --init_preset`: continued pretraining starts exactly at the preset.

Runs on every backend, TensorFlow installed or not (TFRecords and a
tf.distribute strategy on TensorFlow, NumPy instances elsewhere):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_pretrain_init_preset.py
"""

import json
import os

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.pipelines import pretraining as pretraining_pipeline
from keras_albert.pipelines import pretraining_inputs
from keras_albert.pipelines.pretraining import PretrainingSettings
from keras_albert.pipelines.pretraining import run_pretraining
from keras_albert.training.curve_log import read_curve
from tests.conftest import synthetic_sentences

CONFIG = json.dumps(
    dict(num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
         intermediate_dim=32, max_sequence_length=32, dropout=0.0)
)
# One short, partly padded sequence for comparing outputs.
INPUTS = {"token_ids": np.array([[2, 5, 9, 11, 3, 0]]), "segment_ids": np.zeros((1, 6), "int32"),
          "padding_mask": np.array([[1, 1, 1, 1, 1, 0]])}


def _corpus(path, seed):
    lines = synthetic_sentences(160, seed=seed)
    path.write_text("\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, 160, 8)) + "\n")
    return str(path)


def _settings(corpus, output, **overrides):
    values = dict(
        corpus=[corpus], output=str(output), config=CONFIG, vocabulary_size=60,
        max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1, num_shards=1,
        batch_size=8, train_steps=4, warmup_steps=1, learning_rate=0.01,
        checkpoint_every=2, strategy="cpu", jit_compile=False, seed=3,
    )
    values.update(overrides)
    return PretrainingSettings(**values)


@pytest.fixture(scope="module")
def base_preset(tmp_path_factory):
    root = tmp_path_factory.mktemp("init_preset")
    run_pretraining(_settings(
        _corpus(root / "a.txt", seed=0), root / "base",
        eval_corpus=[_corpus(root / "heldout.txt", seed=1)],
    ))
    return root, root / "base" / "preset"


@pytest.mark.large
def test_curve_has_training_and_heldout_points_per_checkpoint(base_preset):
    root, _ = base_preset
    rows = read_curve(root / "base" / "curve.jsonl")
    assert [row["step"] for row in rows] == [2, 4]
    assert [row["tokens"] for row in rows] == [2 * 8 * 32, 4 * 8 * 32]
    for row in rows:
        assert 0 <= row["mlm_accuracy"] <= 1 and 0 <= row["val_mlm_accuracy"] <= 1
        assert "val_sentence_order_accuracy" in row
    assert (root / "base" / "curve.png").stat().st_size > 1000


@pytest.mark.large
def test_first_step_loss_is_the_presets_loss_on_that_batch(base_preset):
    root, preset = base_preset
    settings = _settings(
        _corpus(root / "b.txt", seed=5), root / "continued", init_preset=str(preset),
        train_steps=1, checkpoint_every=1, config="ignored", vocabulary_size=7,
    )
    metrics = run_pretraining(settings)

    # The same first batch, scored by the preset as it was saved: read from
    # the instance files this backend wrote (TFRecords or NumPy).
    files = pretraining_inputs.train_paths(settings, root / "continued" / "data")
    assert all(os.path.isfile(path) for path in files), files
    replicas = pretraining_inputs.training_scope(settings)[1]
    batch = next(iter(
        pretraining_pipeline._train_dataset(
            settings, files, replicas, None,
            keras_albert.AlbertTokenizer.from_preset(str(preset)),
        )(0)
    ))
    original = keras_albert.AlbertPretrainer.from_preset(str(preset))
    x, y, sample_weight = batch
    expected = original.evaluate(
        x=x, y=y, sample_weight=sample_weight, return_dict=True, verbose=0
    )
    assert metrics["train"]["loss"] == pytest.approx(expected["loss"], rel=1e-5)
    assert metrics["train"]["mlm_loss"] == pytest.approx(expected["mlm_loss"], rel=1e-5)
    # The vocabulary is the preset's, not a new one trained on the new corpus.
    assert (root / "continued" / "vocabulary.spm").read_bytes() == (
        keras_albert.AlbertTokenizer.from_preset(str(preset)).proto
    )


@pytest.mark.large
def test_heads_continue_and_weights_move(base_preset):
    root, preset = base_preset
    output = root / "continued_more"
    run_pretraining(_settings(_corpus(root / "c.txt", seed=6), output, init_preset=str(preset)))
    before = keras_albert.AlbertPretrainer.from_preset(str(preset))
    after = keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))
    assert before.backbone.get_config() == after.backbone.get_config()
    moved = [
        not np.allclose(a, b) for a, b in zip(before.get_weights(), after.get_weights())
    ]
    assert any(moved)


def test_init_preset_shorter_than_max_seq_length_is_refused(base_preset, tmp_path):
    root, preset = base_preset
    settings = _settings(
        _corpus(tmp_path / "d.txt", seed=7), tmp_path / "out",
        init_preset=str(preset), max_seq_length=64,
    )
    with pytest.raises(ValueError, match="max_seq_length=64.*32 positions"):
        run_pretraining(settings)


def _teacher_directory(path, count=4200, dim=6):
    path.mkdir()
    texts = synthetic_sentences(count, seed=11)
    (path / "texts.txt").write_text("\n".join(texts) + "\n")
    vectors = np.random.default_rng(0).normal(size=(count, dim)).astype("float32")
    np.save(path / "vectors.npy", vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return str(path)


@pytest.mark.large
def test_teacher_embeddings_add_a_head_and_keep_the_presets_heads(base_preset):
    root, preset = base_preset
    teacher = _teacher_directory(root / "teacher")
    output = root / "with_teacher"
    metrics = run_pretraining(_settings(
        _corpus(root / "e.txt", seed=8), output, init_preset=str(preset),
        teacher_embeddings=teacher, embedding_sequence_length=16,
        eval_corpus=[_corpus(root / "heldout2.txt", seed=1)],
    ))
    for name in ("sentence_embedding_cosine", "mlm_accuracy"):
        assert np.isfinite(metrics["train"][name]) and np.isfinite(metrics["heldout"][name])
    assert "val_sentence_embedding_cosine" in read_curve(output / "curve.jsonl")[-1]
    trained = keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))
    assert trained.sentence_embedding_dim == 6
    # The MLM head started from the preset's (trained further, same shapes).
    before = keras_albert.AlbertPretrainer.from_preset(str(preset))
    assert [w.shape for w in before.masked_lm_head.get_weights()] == [
        w.shape for w in trained.masked_lm_head.get_weights()]


def test_bad_teacher_directory_is_refused_before_any_work(tmp_path):
    teacher = tmp_path / "teacher"
    teacher.mkdir()
    (teacher / "texts.txt").write_text("a\nb\n")
    np.save(teacher / "vectors.npy", np.zeros((3, 4), "float32"))
    settings = _settings(_corpus(tmp_path / "f.txt", seed=9), tmp_path / "out",
                         teacher_embeddings=str(teacher))
    with pytest.raises(ValueError, match="2 texts and vectors of shape \\(3, 4\\)"):
        run_pretraining(settings)
    assert not (tmp_path / "out").exists()


def _sequence_output(pretrainer, training=False):
    # convert_to_numpy: PyTorch's outputs require grad, which NumPy refuses.
    return keras.ops.convert_to_numpy(pretrainer.backbone(INPUTS, training=training)["sequence_output"])


@pytest.mark.large
def test_dropout_override_keeps_the_presets_weights_and_heads(base_preset, tmp_path):
    root, preset = base_preset
    settings = _settings("unused.txt", tmp_path / "out", init_preset=str(preset), dropout=0.25)
    continued = pretraining_pipeline.initial_pretrainer(settings)
    original = keras_albert.AlbertPretrainer.from_preset(str(preset))
    assert (original.backbone.dropout, original.backbone.attention_dropout) == (0.0, 0.0)
    assert (continued.backbone.dropout, continued.backbone.attention_dropout) == (0.25, 0.25)
    for ours, theirs in zip(continued.get_weights(), original.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    # Inference matches the preset; training now drops units.
    np.testing.assert_allclose(
        _sequence_output(continued), _sequence_output(original), atol=1e-6)
    first = _sequence_output(continued, training=True)
    assert not np.allclose(first, _sequence_output(original), atol=1e-4)


@pytest.mark.parametrize("bad", [-0.1, 1.0, "0.1", True])
def test_dropout_outside_zero_to_one_is_refused_before_any_work(bad, tmp_path):
    settings = _settings(_corpus(tmp_path / "g.txt", seed=10), tmp_path / "out", dropout=bad)
    with pytest.raises(ValueError, match=r"`dropout` must be None or a rate in \[0, 1\)\. Received: dropout="):
        run_pretraining(settings)
    assert not (tmp_path / "out").exists()


@pytest.mark.large
def test_more_groups_start_as_copies_of_the_presets_weights(base_preset, tmp_path):
    root, preset = base_preset
    settings = _settings("unused.txt", tmp_path / "out", init_preset=str(preset), num_groups=2)
    continued = pretraining_pipeline.initial_pretrainer(settings)
    original = keras_albert.AlbertPretrainer.from_preset(str(preset))
    assert (original.backbone.num_groups, continued.backbone.num_groups) == (1, 2)
    assert continued.backbone.count_params() > original.backbone.count_params()
    for ours, theirs in zip(continued.masked_lm_head.get_weights(),
                            original.masked_lm_head.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(
        _sequence_output(continued), _sequence_output(original), atol=1e-5)


@pytest.mark.large
def test_continued_run_with_more_groups_keeps_them_and_refuses_merging(base_preset, tmp_path):
    root, preset = base_preset
    corpus = _corpus(tmp_path / "more.txt", seed=5)
    run_pretraining(_settings(corpus, tmp_path / "grouped", init_preset=str(preset), num_groups=2,
                              train_steps=2, checkpoint_every=2))
    saved = keras_albert.AlbertBackbone.from_preset(str(tmp_path / "grouped" / "preset"))
    assert saved.num_groups == 2
    # Back to one group would merge the two trained groups: refused up front.
    settings = _settings(corpus, tmp_path / "merged", init_preset=str(tmp_path / "grouped" / "preset"),
                         num_groups=1)
    with pytest.raises(ValueError, match="`num_groups=1` would merge the weights of 'group_0_inner_0' and 'group_1_inner_0'"):
        run_pretraining(settings)
    assert not (tmp_path / "merged").exists()


@pytest.mark.parametrize("bad", [0, 3, "2", True])
def test_bad_num_groups_is_refused_before_any_work(bad, tmp_path):
    # The config has 2 layers: 3 groups would leave one unused.
    settings = _settings(_corpus(tmp_path / "g.txt", seed=10), tmp_path / "out", num_groups=bad)
    with pytest.raises(ValueError, match="num_groups"):
        run_pretraining(settings)
    assert not (tmp_path / "out").exists()
