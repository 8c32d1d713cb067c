"""ALBERT's preprocessors mapped over tf.data datasets: static shapes (what
TPUs need), labels passed through, pairs unpacked from dataset elements.

TensorFlow only (tf.data is TensorFlow's), on any Keras backend: keras-hub
runs preprocessing in tf.data as TensorFlow ops whatever the backend. The
eager checks run everywhere in test_albert_preprocessors.py.
"""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="tf.data is TensorFlow's")

from keras_albert.models.albert_masked_lm_preprocessor import AlbertMaskedLMPreprocessor  # noqa: E402
from keras_albert.models.albert_text_classifier_preprocessor import (  # noqa: E402
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer  # noqa: E402
from tests.models.test_albert_preprocessors import FIRST  # noqa: E402
from tests.models.test_albert_preprocessors import SECOND  # noqa: E402
from tests.models.test_albert_preprocessors import _corpus  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return AlbertTokenizer(proto=sentencepiece_proto)


@pytest.mark.large
def test_classifier_preprocessor_in_tf_data(tokenizer):
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=20)
    firsts, seconds = [FIRST, "", "Emma"], [SECOND, "Emma", ""]
    labels = [0, 1, 2]
    eager = pre(x=(firsts, seconds))

    # Labeled pairs, mapped directly.
    ds = tf.data.Dataset.from_tensor_slices(((firsts, seconds), labels)).map(pre)
    x_spec, y_spec = ds.element_spec
    assert x_spec["token_ids"].shape == (20,)  # Static: TPU-ready.
    assert x_spec["padding_mask"].dtype == tf.int32
    rows = list(ds)
    for i, (x, y) in enumerate(rows):
        assert int(y) == labels[i]
        for key in eager:
            np.testing.assert_array_equal(x[key], eager[key][i])

    # Unlabeled pairs: tf.data unpacks them into `pre(a, b)`.
    ds = tf.data.Dataset.from_tensor_slices((firsts, seconds)).batch(3).map(pre)
    (x,) = list(ds)
    for key in eager:
        np.testing.assert_array_equal(x[key], eager[key])

    # Labeled single texts, batched.
    ds = tf.data.Dataset.from_tensor_slices((firsts, labels)).batch(3).map(pre)
    x, y = next(iter(ds))
    np.testing.assert_array_equal(x["token_ids"], pre(firsts)["token_ids"])
    assert np.asarray(y).tolist() == labels



@pytest.mark.large
def test_masked_lm_in_tf_data_has_static_shapes(tokenizer):
    pre = AlbertMaskedLMPreprocessor(
        tokenizer, sequence_length=16, mask_selection_length=5
    )
    texts = _corpus(8)
    ds = tf.data.Dataset.from_tensor_slices(texts).batch(4, drop_remainder=True)
    ds = ds.map(pre)
    x_spec, y_spec, w_spec = ds.element_spec
    assert x_spec["token_ids"].shape == (4, 16)
    assert x_spec["mask_positions"].shape == (4, 5)
    assert x_spec["padding_mask"].dtype == tf.int32
    assert y_spec.shape == w_spec.shape == (4, 5)
    x, y, w = next(iter(ds))
    assert int(tf.reduce_sum(w)) > 0

    # Pairs as dataset elements are unpacked into `pre(a, b)`: still a pair.
    pairs = tf.data.Dataset.from_tensor_slices((texts, texts)).map(pre)
    x, _, _ = next(iter(pairs))
    assert 1 in np.asarray(x["segment_ids"]).tolist()


