"""AlbertPretrainer: MLM + SOP / NSP / none, trained on real instances.

Runs on every backend, fed NumPy arrays of the instances (the TFRecord and
tf.data path: test_albert_pretrainer_tf_data.py):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_albert_pretrainer.py
"""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.data.pretraining_arrays import instances_to_arrays
from keras_albert.data.pretraining_batches import numpy_pretraining_batch
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.models.albert_pretrainer import AlbertPretrainer
from keras_albert.models.albert_pretrainer import pretraining_batch
from tests.conftest import synthetic_sentences


def pretraining_instances(sentencepiece_proto):
    sentences = synthetic_sentences(600, seed=3)
    documents = [sentences[i : i + 12] for i in range(0, len(sentences), 12)]
    # NSP instances carry labels usable for every sentence task here.
    return create_pretraining_instances(
        documents,
        sentencepiece_proto,
        max_seq_length=32,
        max_predictions_per_seq=5,
        sentence_task="nsp",
        seed=1,
    )


@pytest.fixture(scope="module")
def instance_arrays(sentencepiece_proto):
    """The instances as feature arrays under Google's names, in order."""
    return instances_to_arrays(pretraining_instances(sentencepiece_proto))


def first_rows(arrays, count):
    return {name: values[:count] for name, values in arrays.items()}


def _backbone(vocabulary_size=80):
    keras.utils.set_random_seed(0)
    return keras_albert.AlbertBackbone(
        vocabulary_size=vocabulary_size,
        num_layers=2,
        num_heads=2,
        embedding_dim=16,
        hidden_dim=32,
        intermediate_dim=64,
        max_sequence_length=32,
    )


@pytest.mark.large
@pytest.mark.parametrize(
    "sentence_task, sentence_metric",
    [("sop", "sentence_order"), ("nsp", "next_sentence"), ("none", None)],
)
def test_training_lowers_both_losses(instance_arrays, sentence_task, sentence_metric):
    pretrainer = AlbertPretrainer(_backbone(), sentence_task=sentence_task)
    pretrainer.compile(optimizer=keras.optimizers.Adam(3e-3))
    # Two fixed batches repeated (10 steps an epoch, in order): the losses
    # must fall as they are learned.
    two_batches = first_rows(instance_arrays, 32)
    features = {name: np.concatenate([values] * 5) for name, values in two_batches.items()}
    x, y, weights = numpy_pretraining_batch(features, sentence_task)
    history = pretrainer.fit(
        x, y, sample_weight=weights, batch_size=16, shuffle=False, epochs=4, verbose=0
    ).history
    assert history["mlm_loss"][-1] < history["mlm_loss"][0] - 0.5
    assert 0 <= history["mlm_accuracy"][-1] <= 1
    if sentence_metric is None:
        assert not any(name.startswith(("sentence", "next")) for name in history)
    else:
        losses = history[f"{sentence_metric}_loss"]
        assert losses[-1] < losses[0]
        assert f"{sentence_metric}_accuracy" in history
    # The train step was compiled with XLA; PyTorch, where True would mean
    # torch.compile, keeps Keras's default.
    assert pretrainer.jit_compile is (keras.config.backend() != "torch")


def test_outputs_and_mlm_head_tied_to_word_embeddings():
    backbone = _backbone()
    pretrainer = AlbertPretrainer(backbone)
    batch = {
        "token_ids": np.full((2, 8), 7, "int32"),
        "segment_ids": np.zeros((2, 8), "int32"),
        "padding_mask": np.ones((2, 8), "int32"),
        "mask_positions": np.array([[1, 2, 0], [3, 0, 0]], "int32"),
    }
    outputs = pretrainer(batch)
    assert outputs["mlm"].shape == (2, 3, 80)
    assert outputs["sentence_order"].shape == (2, 2)
    head_weights = {id(w) for w in pretrainer.masked_lm_head.weights}
    assert id(backbone.token_embedding.embeddings) in head_weights


@pytest.mark.large
def test_loss_ignores_padded_predictions(instance_arrays):
    pretrainer = AlbertPretrainer(_backbone())
    pretrainer.compile()
    x, y, weights = numpy_pretraining_batch(first_rows(instance_arrays, 4))
    base = pretrainer.evaluate(x, y, sample_weight=weights, return_dict=True, verbose=0)
    # Change the labels of padded slots only: the loss must not move.
    padded = weights["mlm"] == 0
    assert padded.any()
    changed = dict(y, mlm=np.where(padded, 9, y["mlm"]))
    again = pretrainer.evaluate(x, changed, sample_weight=weights, return_dict=True, verbose=0)
    np.testing.assert_allclose(again["mlm_loss"], base["mlm_loss"], rtol=1e-6)


def test_preset_round_trip_keeps_heads(tmp_path):
    pretrainer = AlbertPretrainer(_backbone(), sentence_task="nsp")
    pretrainer.save_to_preset(str(tmp_path))
    restored = AlbertPretrainer.from_preset(str(tmp_path))
    assert restored.sentence_task == "nsp"
    for a, b in zip(pretrainer.weights, restored.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
    # The same directory gives a backbone for fine-tuning.
    backbone = keras_albert.AlbertBackbone.from_preset(str(tmp_path))
    assert backbone.count_params() == pretrainer.backbone.count_params()


def test_pretraining_batch_maps_google_feature_names():
    features = {
        "input_ids": np.ones((2, 6), "int32"),
        "input_mask": np.ones((2, 6), "int32"),
        "segment_ids": np.zeros((2, 6), "int32"),
        "masked_lm_positions": np.ones((2, 3), "int32"),
        "masked_lm_ids": np.ones((2, 3), "int32"),
        "masked_lm_weights": np.array([[1.0, 1.0, 0.0]] * 2, "float32"),
        "next_sentence_labels": np.array([[1], [0]], "int32"),
    }
    x, y, weights = pretraining_batch(features, "sop")
    assert sorted(x) == ["mask_positions", "padding_mask", "segment_ids", "token_ids"]
    np.testing.assert_array_equal(y["sentence_order"], [1, 0])
    x, y, weights = pretraining_batch(features, "none")
    assert sorted(y) == ["mlm"]


@pytest.mark.parametrize("bad", ["SOP", "mlm", None])
def test_bad_sentence_task_is_named(bad):
    with pytest.raises(ValueError, match="sentence_task"):
        AlbertPretrainer(_backbone(), sentence_task=bad)


def test_preprocessor_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="no preprocessor"):
        AlbertPretrainer(_backbone(), preprocessor=object())


@pytest.mark.large
def test_mixed_bfloat16_trains_with_float32_logits():
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        pretrainer = AlbertPretrainer(_backbone())
        pretrainer.compile(optimizer=keras.optimizers.Adam(1e-3))
        assert pretrainer.backbone.compute_dtype == "bfloat16"
        rng = np.random.default_rng(0)
        x = {
            "token_ids": rng.integers(5, 80, (8, 16)).astype("int32"),
            "segment_ids": np.zeros((8, 16), "int32"),
            "padding_mask": np.ones((8, 16), "int32"),
            "mask_positions": rng.integers(1, 15, (8, 3)).astype("int32"),
        }
        y = {
            "mlm": rng.integers(5, 80, (8, 3)).astype("int32"),
            "sentence_order": rng.integers(0, 2, (8,)).astype("int32"),
        }
        assert {keras.backend.standardize_dtype(v.dtype) for v in pretrainer(x).values()} == {"float32"}
        losses = pretrainer.fit(x, y, epochs=3, verbose=0).history["loss"]
        assert np.isfinite(losses).all() and losses[-1] < losses[0]
    finally:
        keras.config.set_dtype_policy(previous)
