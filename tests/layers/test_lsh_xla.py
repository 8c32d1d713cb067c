"""LSH attention under XLA equals LSH without XLA; hashing helpers exact.

Runs on every backend: XLA (tf.function(jit_compile=True), jax.jit) on
TensorFlow and JAX; without it, against NumPy references on all three
(PyTorch has no XLA in Keras):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/layers/test_lsh_xla.py
"""

import numpy as np
import pytest
from keras import ops

from keras_albert.layers import AlbertLSHSelfAttention
from keras_albert.layers.lsh_hashing import hash_buckets
from keras_albert.layers.lsh_hashing import invert_permutation
from keras_albert.layers.lsh_hashing import sort_by_bucket
from tests.layers.backend_autodiff import JIT_CHOICES
from tests.layers.backend_autodiff import jit_mode
from tests.layers.backend_autodiff import loss_and_gradients
from tests.layers.backend_autodiff import run
from tests.layers.test_lsh_attention import _lsh_reference
from tests.layers.test_lsh_attention import _real

HIDDEN = 16


def _inputs(length, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, length, HIDDEN)).astype("float32")
    mask = np.ones((2, length), "int32")
    mask[1, length - 5:] = 0
    return x, mask


@pytest.mark.large
@pytest.mark.parametrize("jit_compile", JIT_CHOICES)
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
def test_xla_equals_no_xla(kwargs, jit_compile):
    layer = AlbertLSHSelfAttention(
        num_heads=2, hidden_dim=HIDDEN, seed=0, initializer_range=0.5, **kwargs
    )
    x, mask = _inputs(length=61)  # not a multiple of any chunk length

    def forward(a, m):
        return layer(a, padding_mask=m)

    def loss_of(a):
        out = layer(a, padding_mask=mask)
        return ops.sum(out * out)

    # Without XLA (a tf.function on TensorFlow, eager elsewhere).
    plain_out = run(forward, x, mask, mode=jit_mode(False))
    plain_grads = loss_and_gradients(layer, loss_of, x, mode=jit_mode(False))
    if not jit_compile:
        # The outputs equal the NumPy LSH (the heads' layout of
        # test_lsh_attention: 2 heads), the gradients are all there.
        expected = _lsh_reference(layer, x, mask)
        np.testing.assert_allclose(_real(plain_out, mask), _real(expected, mask), atol=1e-5)
        assert len(plain_grads) == 2 + len(layer.trainable_variables)
        for grad in plain_grads:
            assert grad is not None and np.isfinite(grad).all()
        return
    xla_out = run(forward, x, mask, mode="xla")
    xla_grads = loss_and_gradients(layer, loss_of, x, mode="xla")
    np.testing.assert_allclose(xla_out, plain_out, rtol=1e-5, atol=1e-5)
    # [loss, d/dx, d/dw...]
    # XLA sums in another order, so an element differs by float32 rounding
    # of the largest terms summed, not of itself: a weight gradient whose
    # entries reach 142 differed by 1.25e-4 on an entry of 0.114 in one
    # full-suite run (lsh-2, causal; the runs before it passed).
    for xla_grad, plain_grad in zip(xla_grads[1:], plain_grads[1:]):
        scale = float(np.abs(plain_grad).max())
        np.testing.assert_allclose(xla_grad, plain_grad, rtol=1e-4, atol=1e-4 + 1e-5 * scale)


def _numpy_sort(buckets, valid, num_buckets):
    """Positions sorted by (bucket, position), padding in bucket
    `num_buckets`; whether each sorted slot is real; the inverse."""
    length = buckets.shape[-1]
    keys = np.where(valid, buckets, num_buckets) * length + np.arange(length)
    positions = np.argsort(keys, axis=-1, kind="stable")
    sorted_valid = np.take_along_axis(np.broadcast_to(valid, buckets.shape), positions, -1)
    return positions, sorted_valid, np.argsort(positions, -1)


@pytest.mark.parametrize("jit_compile", JIT_CHOICES)
def test_hashing_and_sorting_are_identical_under_xla(jit_compile):
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(2, 3, 200, 8)).astype("float32")
    rotations = rng.normal(size=(3, 8, 2 * 16 // 2)).astype("float32")
    valid = rng.random((2, 1, 1, 200)) > 0.2

    def pipeline(v, r, ok):
        buckets = hash_buckets(v, r, 2, 16)
        positions, sorted_valid = sort_by_bucket(buckets, ok, 16)
        return buckets, positions, sorted_valid, invert_permutation(positions)

    plain = run(pipeline, vectors, rotations, valid, mode=jit_mode(False))
    # The sort and its inverse, from the buckets the backend hashed.
    for got, want in zip(plain[1:], _numpy_sort(plain[0], valid, 16)):
        np.testing.assert_array_equal(got, want)
    if jit_compile:
        xla = run(pipeline, vectors, rotations, valid, mode="xla")
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
    vectors = rotated[None, None]  # [1, 1, 8, 4]
    identity = np.eye(half, dtype="float32")[None]  # [1, 4, 4]: one round of 2 * half buckets
    buckets = ops.convert_to_numpy(hash_buckets(vectors, identity, 1, 2 * half))
    np.testing.assert_array_equal(buckets[0, 0, 0], _numpy_buckets(rotated))
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(2, 2, 50, 6)).astype("float32")
    rotations = rng.normal(size=(2, 6, 3 * 5)).astype("float32")
    buckets = ops.convert_to_numpy(hash_buckets(vectors, rotations, 3, 10))
    rotated = np.einsum("bnld,ndk->bnlk", vectors, rotations).reshape(2, 2, 50, 3, 5)
    np.testing.assert_array_equal(buckets, _numpy_buckets(rotated).transpose(0, 1, 3, 2))


def test_invert_permutation_is_the_inverse():
    rng = np.random.default_rng(0)
    permutations = np.stack([rng.permutation(37) for _ in range(6)]).reshape(2, 3, 37)
    inverse = ops.convert_to_numpy(invert_permutation(permutations.astype("int32")))
    np.testing.assert_array_equal(inverse, np.argsort(permutations, -1))


def test_factorised_buckets_combine_per_factor_argmax():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(2, 2, 40, 6)).astype("float32")
    # Two rounds of factors [4, 6]: 2 + 3 rotation columns per round.
    rotations = rng.normal(size=(2, 6, 2 * 5)).astype("float32")
    buckets = ops.convert_to_numpy(hash_buckets(vectors, rotations, 2, [4, 6]))
    rotated = np.einsum("bnld,ndk->bnlk", vectors, rotations).reshape(2, 2, 40, 2, 5)
    expected = _numpy_buckets(rotated[..., :2]) + 4 * _numpy_buckets(rotated[..., 2:])
    np.testing.assert_array_equal(buckets, expected.transpose(0, 1, 3, 2))
    assert buckets.min() >= 0 and buckets.max() < 24


@pytest.mark.large
@pytest.mark.parametrize("jit_compile", JIT_CHOICES)
def test_factorised_layer_config_xla_and_validation(jit_compile):
    layer = AlbertLSHSelfAttention(
        num_heads=2, hidden_dim=HIDDEN, num_buckets=[4, 4], chunk_length=8, num_hashes=2, seed=0
    )
    x, mask = _inputs(length=40)
    eager = ops.convert_to_numpy(layer(x, padding_mask=mask))
    assert layer.rotations.shape == (2, HIDDEN // 2, 2 * 4)
    compiled = run(lambda a, m: layer(a, padding_mask=m), x, mask, mode=jit_mode(jit_compile))
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-5)
    config = layer.get_config()
    assert config["num_buckets"] == [4, 4]
    rebuilt = AlbertLSHSelfAttention.from_config(config)
    rebuilt.build(x.shape)
    rebuilt.set_weights(layer.get_weights())
    np.testing.assert_array_equal(ops.convert_to_numpy(rebuilt(x, padding_mask=mask)), eager)
    for bad in ([4, 3], [], [4, True], [1, 4]):
        with pytest.raises(ValueError, match="num_buckets"):
            AlbertLSHSelfAttention(num_heads=2, hidden_dim=HIDDEN, num_buckets=bad)
