"""LSH attention under XLA equals LSH without XLA; hashing helpers exact."""

import numpy as np
import pytest
import tensorflow as tf

from keras_albert.layers import AlbertLSHSelfAttention
from keras_albert.layers.lsh_hashing import hash_buckets
from keras_albert.layers.lsh_hashing import invert_permutation
from keras_albert.layers.lsh_hashing import sort_by_bucket

HIDDEN = 16


def _inputs(length, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, length, HIDDEN)).astype("float32")
    mask = np.ones((2, length), "int32")
    mask[1, length - 5:] = 0
    return tf.constant(x), tf.constant(mask)


@pytest.mark.large
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_hashes=1, num_buckets=8, chunk_length=8),
        dict(num_hashes=4, num_buckets=8, chunk_length=8, num_chunks_after=1),
        dict(num_hashes=2, num_buckets=4, chunk_length=4, causal=True),
        dict(num_hashes=1, num_buckets=1, chunk_length=16),
    ],
    ids=["lsh-1", "lsh-4-ahead", "lsh-2-causal", "one-bucket"],
)
def test_xla_equals_no_xla(kwargs):
    layer = AlbertLSHSelfAttention(
        num_heads=2, hidden_dim=HIDDEN, seed=0, initializer_range=0.5, **kwargs
    )
    x, mask = _inputs(length=61)  # not a multiple of any chunk length

    def forward_and_gradients(a, m):
        with tf.GradientTape() as tape:
            tape.watch(a)
            out = layer(a, padding_mask=m)
            loss = tf.reduce_sum(out * out)
        return out, tape.gradient(loss, [a] + layer.trainable_variables)

    plain_out, plain_grads = tf.function(forward_and_gradients)(x, mask)
    xla_out, xla_grads = tf.function(forward_and_gradients, jit_compile=True)(x, mask)
    np.testing.assert_allclose(xla_out, plain_out, rtol=1e-5, atol=1e-5)
    for xla_grad, plain_grad in zip(xla_grads, plain_grads):
        np.testing.assert_allclose(
            tf.convert_to_tensor(xla_grad), tf.convert_to_tensor(plain_grad), rtol=1e-4, atol=1e-4
        )


def test_hashing_and_sorting_are_identical_under_xla():
    rng = np.random.default_rng(1)
    vectors = tf.constant(rng.normal(size=(2, 3, 200, 8)), tf.float32)
    rotations = tf.constant(rng.normal(size=(3, 8, 2 * 16 // 2)), tf.float32)
    valid = tf.constant(rng.random((2, 1, 1, 200)) > 0.2)

    def pipeline(v, r, ok):
        buckets = hash_buckets(v, r, 2, 16)
        positions, sorted_valid = sort_by_bucket(buckets, ok, 16)
        return buckets, positions, sorted_valid, invert_permutation(positions)

    plain = tf.function(pipeline)(vectors, rotations, valid)
    xla = tf.function(pipeline, jit_compile=True)(vectors, rotations, valid)
    for a, b in zip(plain, xla):
        np.testing.assert_array_equal(a, b)


def _numpy_buckets(rotated):
    """argmax over [xR, -xR] (NumPy: the first maximum wins ties)."""
    return np.argmax(np.concatenate([rotated, -rotated], -1), -1)


def test_hash_buckets_match_argmax_including_ties():
    half = 4
    rotated = np.array(
        [
            [3.0, -1.0, 2.0, 0.5],   # largest positive
            [1.0, -3.0, 2.0, 0.5],   # most negative wins: bucket 1 + half
            [2.0, 2.0, -1.0, 0.0],   # tie within xR: first index
            [-2.0, 1.0, -2.0, 0.0],  # tie within -xR: first index
            [2.0, -2.0, 1.0, 0.0],   # |max| == |min|: xR wins (first half)
            [-2.0, 2.0, 1.0, 0.0],   # same, the maximum comes second
            [0.0, 0.0, 0.0, 0.0],    # all equal
            [-1.0, -1.0, -1.0, -1.0],
        ],
        "float32",
    )
    # Feed the rows through the rotation: identity rotation, head_dim = half.
    vectors = tf.constant(rotated[None, None])  # [1, 1, 8, 4]
    identity = tf.eye(half)[None]  # [1, 4, 4]: one round of 2 * half buckets
    buckets = hash_buckets(vectors, identity, 1, 2 * half)
    np.testing.assert_array_equal(buckets[0, 0, 0], _numpy_buckets(rotated))
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(2, 2, 50, 6)).astype("float32")
    rotations = rng.normal(size=(2, 6, 3 * 5)).astype("float32")
    buckets = hash_buckets(tf.constant(vectors), tf.constant(rotations), 3, 10).numpy()
    rotated = np.einsum("bnld,ndk->bnlk", vectors, rotations).reshape(2, 2, 50, 3, 5)
    np.testing.assert_array_equal(buckets, _numpy_buckets(rotated).transpose(0, 1, 3, 2))


def test_invert_permutation_is_the_inverse():
    rng = np.random.default_rng(0)
    permutations = np.stack([rng.permutation(37) for _ in range(6)]).reshape(2, 3, 37)
    inverse = invert_permutation(tf.constant(permutations, tf.int32)).numpy()
    np.testing.assert_array_equal(inverse, np.argsort(permutations, -1))


def test_factorised_buckets_combine_per_factor_argmax():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(2, 2, 40, 6)).astype("float32")
    # Two rounds of factors [4, 6]: 2 + 3 rotation columns per round.
    rotations = rng.normal(size=(2, 6, 2 * 5)).astype("float32")
    buckets = hash_buckets(tf.constant(vectors), tf.constant(rotations), 2, [4, 6]).numpy()
    rotated = np.einsum("bnld,ndk->bnlk", vectors, rotations).reshape(2, 2, 40, 2, 5)
    expected = _numpy_buckets(rotated[..., :2]) + 4 * _numpy_buckets(rotated[..., 2:])
    np.testing.assert_array_equal(buckets, expected.transpose(0, 1, 3, 2))
    assert buckets.min() >= 0 and buckets.max() < 24


@pytest.mark.large
def test_factorised_layer_config_xla_and_validation():
    layer = AlbertLSHSelfAttention(
        num_heads=2, hidden_dim=HIDDEN, num_buckets=[4, 4], chunk_length=8, num_hashes=2, seed=0
    )
    x, mask = _inputs(length=40)
    eager = layer(x, padding_mask=mask).numpy()
    assert layer.rotations.shape == (2, HIDDEN // 2, 2 * 4)
    xla = tf.function(lambda a, m: layer(a, padding_mask=m), jit_compile=True)(x, mask)
    np.testing.assert_allclose(xla, eager, rtol=1e-5, atol=1e-5)
    config = layer.get_config()
    assert config["num_buckets"] == [4, 4]
    rebuilt = AlbertLSHSelfAttention.from_config(config)
    rebuilt.build(x.shape)
    rebuilt.set_weights(layer.get_weights())
    np.testing.assert_array_equal(rebuilt(x, padding_mask=mask), eager)
    for bad in ([4, 3], [], [4, True], [1, 4]):
        with pytest.raises(ValueError, match="num_buckets"):
            AlbertLSHSelfAttention(num_heads=2, hidden_dim=HIDDEN, num_buckets=bad)
