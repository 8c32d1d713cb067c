"""AlbertPretrainer's optional sentence-embedding head (sentence-level distillation).

Runs on every backend, fed NumPy arrays of the instances:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_pretrainer_sentence_embedding.py
"""

import keras
import numpy as np
import pytest

from keras_albert.data.pretraining_batches import PretrainingBatches
from keras_albert.models.albert_pretrainer import AlbertPretrainer
from keras_albert.models.albert_pretrainer import cosine_distance
from keras_albert.models.albert_pretrainer import embedding_batch
from tests.models.test_albert_pretrainer import _backbone
from tests.models.test_albert_pretrainer import instance_arrays  # noqa: F401 (fixture)


def _teacher_vectors(count, dim=6, seed=0):
    vectors = np.random.default_rng(seed).normal(size=(count, dim)).astype("float32")
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _packed(count, length=8, seed=1):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, 80, size=(count, length)).astype("int32")
    token_ids[:, 0] = 2
    return {"token_ids": token_ids, "segment_ids": np.zeros_like(token_ids),
            "padding_mask": np.ones_like(token_ids)}


def test_cosine_distance():
    a = np.array([[1.0, 0.0], [0.0, 1.0]], "float32")
    b = np.array([[1.0, 0.0], [1.0, 0.0]], "float32")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(cosine_distance(a * 3, b)), [0.0, 1.0])


@pytest.mark.large
def test_learns_teacher_vectors_with_mlm_and_sop(instance_arrays):  # noqa: F811
    pretrainer = AlbertPretrainer(_backbone(), sentence_embedding_dim=6)
    assert sorted(pretrainer.output) == ["mlm", "sentence_embedding", "sentence_order"]
    pretrainer.compile(optimizer=keras.optimizers.Adam(3e-3))
    # The same 8 texts and vectors each step: the head must fit them. 40
    # shuffled batches of 8 instances, laid end to end and fed in order.
    packed, vectors = _packed(8), _teacher_vectors(8)
    add = embedding_batch(packed, vectors)
    stream = PretrainingBatches(instance_arrays, 8, seed=0)
    batches = [keras.tree.map_structure(keras.ops.convert_to_numpy, add(*stream.batch(i)))
               for i in range(40)]
    x, y, weights = keras.tree.map_structure(lambda *parts: np.concatenate(parts), *batches)

    def cosine():
        outputs = pretrainer.predict_on_batch(batches[0][0])
        norms = np.linalg.norm(outputs["sentence_embedding"], axis=1)
        np.testing.assert_allclose(norms, 1, rtol=1e-5)
        return (outputs["sentence_embedding"] * vectors).sum(1).mean()

    before = cosine()
    history = pretrainer.fit(x, y, sample_weight=weights, batch_size=8, shuffle=False, epochs=1, verbose=0)
    assert before < 0.3 and cosine() > 0.6
    assert np.isfinite(history.history["mlm_loss"][-1])


def test_config_and_preset_round_trip(tmp_path):
    pretrainer = AlbertPretrainer(_backbone(), sentence_embedding_dim=6)
    restored = AlbertPretrainer.from_config(pretrainer.get_config())
    assert restored.sentence_embedding_dim == 6
    pretrainer.save_to_preset(str(tmp_path / "preset"))
    loaded = AlbertPretrainer.from_preset(str(tmp_path / "preset"))
    for a, b in zip(pretrainer.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "384"])
def test_bad_dim_is_named(bad):
    with pytest.raises(ValueError, match="sentence_embedding_dim"):
        AlbertPretrainer(_backbone(), sentence_embedding_dim=bad)


def test_without_the_head_nothing_changes():
    pretrainer = AlbertPretrainer(_backbone())
    assert pretrainer.sentence_embedding_head is None
    assert "embedding_token_ids" not in pretrainer.input
    assert pretrainer.get_config()["sentence_embedding_dim"] is None
