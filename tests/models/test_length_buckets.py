"""Length-bucketed predict/evaluate: the unbucketed outputs, in the original order.

Runs on every backend, TensorFlow not needed:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_length_buckets.py
"""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import max_padded_shapes
from keras_albert.models.length_buckets import plan_batches
from tests.conftest import synthetic_sentences


@pytest.fixture(scope="module")
def classifier(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80, max_sequence_length=128))
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=128)
    return keras_albert.AlbertClassifier(backbone, num_classes=3, preprocessor=pre)


def unbucketed(task, method, *args, **kwargs):
    saved, task.length_buckets = task.length_buckets, None
    try:
        return getattr(task, method)(*args, **kwargs)
    finally:
        task.length_buckets = saved


def texts_with_one_long():
    texts = synthetic_sentences(40, seed=4)
    texts.insert(17, " ".join(synthetic_sentences(30, seed=5)))  # longer than 128 pieces
    return texts


def token_lengths(task, texts):
    return np.asarray(task.preprocessor(texts)["padding_mask"]).sum(-1)


@pytest.mark.large
def test_one_long_text_among_many_short_ones(classifier):
    texts = texts_with_one_long()
    expected = unbucketed(classifier, "predict", texts, batch_size=8, verbose=0)
    got = classifier.predict(texts, batch_size=8, verbose=0)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    lengths = token_lengths(classifier, texts)
    assert lengths[17] == 128 and np.median(lengths) < 16  # the buckets were used
    # Pairs keep their order too.
    pairs = (texts, texts[::-1])
    np.testing.assert_allclose(
        classifier.predict(pairs, batch_size=8, verbose=0),
        unbucketed(classifier, "predict", pairs, batch_size=8, verbose=0),
        atol=1e-5,
    )


def test_evaluate_equals_unbucketed(classifier):
    texts = texts_with_one_long()
    labels = np.arange(len(texts)) % 3
    expected = unbucketed(classifier, "evaluate", texts, labels, batch_size=8, verbose=0, return_dict=True)
    got = classifier.evaluate(texts, labels, batch_size=8, verbose=0, return_dict=True)
    assert got.keys() == expected.keys()
    for name in got:
        np.testing.assert_allclose(got[name], expected[name], atol=1e-5)


def test_evaluate_takes_labels_and_weights_as_python_lists(classifier):
    # `fit(x=texts, y=[0, 3])` is the README's first example; `evaluate`
    # with the same plain lists once failed inside the bucketing.
    texts = texts_with_one_long()
    labels = [i % 3 for i in range(len(texts))]
    weights = [1.0 + (i % 2) for i in range(len(texts))]
    expected = classifier.evaluate(
        texts, np.asarray(labels), sample_weight=np.asarray(weights), batch_size=8, verbose=0, return_dict=True
    )
    got = classifier.evaluate(texts, labels, sample_weight=weights, batch_size=8, verbose=0, return_dict=True)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], atol=1e-6)


def test_plan_groups_by_bucket_and_bounds_row_counts():
    lengths = np.array([5, 40, 3, 17, 100, 9, 2, 20, 30])
    plan = plan_batches(lengths, batch_size=4, shapes=[16, 32, 64, 128])
    assert [b.length for b in plan] == [128, 64, 32, 16]
    assert [b.rows.tolist() for b in plan] == [[4], [1], [3, 7, 8, 3], [0, 2, 5, 6]]
    # Without row padding the partial batch keeps its 3 rows.
    unpadded = plan_batches(lengths, batch_size=4, shapes=[16, 32, 64, 128], pad_rows=False)
    assert [len(b.rows) for b in unpadded] == [1, 1, 3, 4]


def test_padded_shapes_stay_within_their_bound(classifier, monkeypatch):
    assert bucket_lengths(128) == [16, 32, 64, 128]
    assert bucket_lengths(100) == [16, 32, 64, 100]
    seen = set()
    original = keras.Model.predict_on_batch

    # The batches the compiled predict step sees. Spied at predict_on_batch,
    # not predict_function: that one's arguments differ by backend (JAX passes
    # its state and an iterator).
    def spy(model, x):
        seen.add(tuple(x["token_ids"].shape))
        return original(model, x)

    monkeypatch.setattr(keras.Model, "predict_on_batch", spy)
    texts = [" ".join(["dog"] * n) for n in (1, 3, 9, 20, 33, 60, 90, 200)] * 3
    # Many calls with many example counts: the shape set stays bounded.
    for count in range(1, len(texts) + 1, 3):
        classifier.predict(texts[:count], batch_size=4, verbose=0)
    monkeypatch.undo()
    assert {length for _, length in seen} <= {16, 32, 64, 128}
    assert {rows for rows, _ in seen} <= {1, 2, 4}
    assert len(seen) >= 4 and len(seen) <= max_padded_shapes(128, 4)


def test_length_buckets_none_and_bad_values(classifier):
    texts = synthetic_sentences(5, seed=1)
    saved = classifier.length_buckets
    try:
        classifier.length_buckets = [0, 16]
        with pytest.raises(ValueError, match="length_buckets"):
            classifier.predict(texts, verbose=0)
    finally:
        classifier.length_buckets = saved


def test_batch_sizes_that_are_not_positive_integers_are_refused(classifier):
    texts = synthetic_sentences(5, seed=1)
    for bad in (0, -2, 2.5, True):
        for call in (lambda: classifier.predict(texts, batch_size=bad, verbose=0),
                     lambda: classifier.evaluate(texts, np.zeros(5), batch_size=bad, verbose=0)):
            with pytest.raises(ValueError, match=rf"`batch_size` must be a positive integer\. Received: "
                                                 rf"batch_size={bad!r}$"):
                call()
    # NumPy integers are integers: the outputs are those of a Python int.
    np.testing.assert_allclose(classifier.predict(texts, batch_size=np.int64(2), verbose=0),
                               classifier.predict(texts, batch_size=2, verbose=0), atol=1e-6)
