"""AlbertTokenizer's TensorFlow path: ALBERT's normalisation as TensorFlow
string ops (tensorflow-text), the tokenizer in tf.function and tf.data.

TensorFlow only (tf-text tokenization is TensorFlow's), on any Keras
backend: keras-hub runs it as TensorFlow ops whatever the backend. The
tokenizer's eager checks run everywhere in test_albert_tokenizer.py.
"""

import keras
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="tf-text tokenization is TensorFlow's")

from keras_albert.models.albert_tokenizer import AlbertTokenizer  # noqa: E402
from keras_albert.models.albert_tokenizer import albert_normalize_text  # noqa: E402
from keras_albert.utils.text_normalization import normalize_text  # noqa: E402
from tests.models.test_albert_tokenizer import TRICKY_TEXTS  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return AlbertTokenizer(proto=sentencepiece_proto)


@pytest.mark.parametrize("lowercase", [True, False])
def test_normalization_matches_python_normalize_text(lowercase):
    expected = [normalize_text(t, lowercase=lowercase) for t in TRICKY_TEXTS]
    eager = albert_normalize_text(TRICKY_TEXTS, lowercase=lowercase).numpy()
    assert [s.decode("utf-8") for s in eager] == expected

    graph = tf.function(
        lambda t: albert_normalize_text(t, lowercase=lowercase),
        input_signature=[tf.TensorSpec([], tf.string)],
    )
    for text, want in zip(TRICKY_TEXTS, expected):
        assert graph(tf.constant(text)).numpy().decode("utf-8") == want


def test_normalization_matches_on_every_code_point_below_u2c00():
    # Every character in context; TF and Python agree exactly up to the
    # characters added in Unicode 14 (Python 3.11's tables).
    points = [chr(p) for p in range(0x2C00) if not 0xD800 <= p <= 0xDFFF]
    texts = [
        "Xy " + "".join(points[i : i + 48]) + " zW"
        for i in range(0, len(points), 48)
    ]
    got = albert_normalize_text(texts).numpy()
    mismatches = [
        t for t, g in zip(texts, got) if g.decode("utf-8") != normalize_text(t)
    ]
    assert not mismatches


def test_empty_strings_in_a_tf_function(tokenizer):
    ragged = tf.function(tokenizer)(tf.constant(["", "emma", ""]))
    assert ragged.row_lengths().numpy().tolist()[0::2] == [0, 0]


def test_scalar_and_batched_inputs_in_tf_data(tokenizer):
    texts = ["The CAT sleeps", "", "Émma"]
    eager = [np.asarray(tokenizer(t)).tolist() for t in texts]

    unbatched = tf.data.Dataset.from_tensor_slices(texts).map(tokenizer)
    assert [ids.numpy().tolist() for ids in unbatched] == eager

    batched = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(tokenizer)
    (ragged,) = list(batched)
    assert ragged.to_list() == eager


def test_dense_output_with_sequence_length_in_a_tf_function(sentencepiece_proto):
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto, sequence_length=6)
    ids = tf.function(tokenizer)(tf.constant(["emma", "", "the cat sees the dog"]))
    assert ids.shape == (3, 6)
    assert ids.numpy()[1].tolist() == [0] * 6  # Padded with <pad> = 0.


def test_tf_data_works_after_the_random_seed_is_reset(sentencepiece_proto):
    # `set_random_seed` clears TF's kernel cache, which deletes
    # tensorflow-text's SentencePiece resource (tensorflow/text#570);
    # keras-hub's own tokenizer then fails in every later tf.data map.
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto)
    expected = np.asarray(tokenizer("Emma")).tolist()
    for reset in (lambda: keras.utils.set_random_seed(0), keras.utils.clear_session):
        reset()
        ds = tf.data.Dataset.from_tensor_slices(["Emma"]).map(tokenizer)
        assert next(iter(ds)).numpy().tolist() == expected
        text = tf.function(tokenizer.detokenize)(tf.constant([expected]))
        assert text.numpy().tolist() == [b"emma"]
