"""LSH self-attention against NumPy references, masks and XLA.

Runs on every backend (XLA on TensorFlow and JAX; PyTorch has none in
Keras); TFLite and tf.function graphs: test_lsh_attention_tf_graphs.py.
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/layers/test_lsh_attention.py
"""

import keras
import numpy as np
import pytest
from keras import ops

from keras_albert.layers import AlbertLSHSelfAttention
from keras_albert.layers.attention_registry import make_attention
from keras_albert.layers.lsh_attention import SELF_PENALTY
from tests.layers.backend_autodiff import JIT_CHOICES
from tests.layers.backend_autodiff import jit_mode
from tests.layers.backend_autodiff import loss_and_gradients
from tests.layers.backend_autodiff import run

HEADS, HIDDEN = 2, 8


def _np(value):
    return ops.convert_to_numpy(value)


def _layer(**kwargs):
    kwargs.setdefault("seed", 0)
    # Large weights: peaked attention and outputs of order 1, so a 1e-5
    # tolerance is a tight check.
    kwargs.setdefault("initializer_range", 0.5)
    return AlbertLSHSelfAttention(num_heads=HEADS, hidden_dim=HIDDEN, **kwargs)


def _inputs(batch=2, length=11, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, length, HIDDEN)).astype("float32")
    mask = np.ones((batch, length), "int32")
    mask[-1, length - 3 :] = 0
    return x, mask


def _dense(layer, value):
    return value @ _np(layer.kernel) + _np(layer.bias)


def _heads(layer, x):
    """Shared QK and V per head, [batch, heads, length, head_dim]."""
    split = lambda t: t.reshape(t.shape[0], t.shape[1], HEADS, -1).transpose(
        0, 2, 1, 3
    )
    return split(_dense(layer.query, x)), split(_dense(layer.value, x))


def _attend(q, k, v, allowed, self_mask):
    """Softmax attention over the allowed keys; returns (context, lse)."""
    k = k / np.sqrt(np.mean(k**2, -1, keepdims=True) + 1e-6) / np.sqrt(k.shape[-1])
    scores = q @ k.T
    scores = np.where(self_mask, SELF_PENALTY, scores)
    scores = np.where(allowed, scores, -np.inf)
    top = scores.max(-1, keepdims=True)
    lse = top + np.log(np.exp(scores - top).sum(-1, keepdims=True))
    return np.exp(scores - lse) @ v, lse[:, 0]


def _full_shared_qk_reference(layer, x, mask, causal=False):
    """Brute force: every token attends to every real token (not itself)."""
    qk, v = _heads(layer, x)
    length = x.shape[1]
    out = np.zeros_like(qk)
    for b in range(x.shape[0]):
        allowed = np.broadcast_to(mask[b][None, :] > 0, (length, length))
        if causal:
            allowed = allowed & np.tri(length, dtype=bool)
        for n in range(HEADS):
            out[b, n], _ = _attend(
                qk[b, n], qk[b, n], v[b, n], allowed, np.eye(length, dtype=bool)
            )
    context = out.transpose(0, 2, 1, 3).reshape(x.shape)
    return _dense(layer.output_dense, context)


def _lsh_reference(layer, x, mask):
    """LSH written from the spec with explicit loops and NumPy sorting."""
    qk, v = _heads(layer, x)
    batch, length = x.shape[:2]
    chunk = layer.chunk_length
    padded = -(-length // chunk) * chunk
    num_chunks = padded // chunk
    nb, rounds = layer.num_buckets, layer.num_hashes
    offsets = [0] + [-i for i in range(1, layer.num_chunks_before + 1)]
    offsets += list(range(1, layer.num_chunks_after + 1))
    out = np.zeros_like(qk)
    for b in range(batch):
        valid = np.zeros(padded, bool)
        valid[:length] = mask[b] > 0
        for n in range(HEADS):
            contexts, lses = [], []
            for r in range(rounds):
                if nb == 1:
                    buckets = np.zeros(length, int)
                else:
                    half = nb // 2
                    rotation = _np(layer.rotations)[n][:, r * half : (r + 1) * half]
                    rotated = qk[b, n] @ rotation
                    buckets = np.argmax(np.concatenate([rotated, -rotated], -1), -1)
                buckets = np.concatenate([buckets, np.full(padded - length, nb)])
                buckets = np.where(valid, buckets, nb)
                order = np.lexsort((np.arange(padded), buckets))
                chunk_of = np.empty(padded, int)
                chunk_of[order] = np.arange(padded) // chunk
                context = np.zeros((length, qk.shape[-1]))
                lse = np.zeros(length)
                for i in np.flatnonzero(valid[:length]):
                    # No wrapping around the ends.
                    seen = {chunk_of[i] + o for o in offsets} & set(range(num_chunks))
                    allowed = np.isin(chunk_of[:length], list(seen)) & valid[:length]
                    if layer.causal:
                        allowed &= np.arange(length) <= i
                    self_mask = np.arange(length) == i
                    c, log_sum = _attend(
                        qk[b, n][i : i + 1], qk[b, n], v[b, n], allowed[None],
                        self_mask[None],
                    )
                    context[i], lse[i] = c[0], log_sum[0]
                contexts.append(context)
                lses.append(lse)
            weights = np.exp(np.array(lses) - np.max(lses, 0))
            weights /= weights.sum(0)
            out[b, n] = np.einsum("rl,rld->ld", weights, np.array(contexts))
    context = out.transpose(0, 2, 1, 3).reshape(x.shape)
    return _dense(layer.output_dense, context)


def _real(values, mask):
    return values[mask > 0]


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_buckets=1, chunk_length=16),
        dict(num_buckets=2, chunk_length=16, num_hashes=2),
        dict(
            num_buckets=1, chunk_length=11, num_chunks_before=1, num_chunks_after=1
        ),
        dict(num_buckets=4, chunk_length=32, num_hashes=3, num_chunks_before=2),
        dict(num_buckets=2, chunk_length=16, causal=True),
    ],
)
def test_one_chunk_equals_full_shared_qk_attention(kwargs):
    x, mask = _inputs()
    layer = _layer(**kwargs)
    out = _np(layer(x, padding_mask=mask))
    expected = _full_shared_qk_reference(layer, x, mask, causal=layer.causal)
    np.testing.assert_allclose(_real(out, mask), _real(expected, mask), atol=1e-5)


def test_two_chunks_seen_both_ways_count_once():
    # Two chunks, one back and one ahead: each sees the other once (the
    # window does not wrap around to reach it a second time).
    x, mask = _inputs(length=12)
    layer = _layer(
        num_buckets=1, chunk_length=6, num_chunks_before=1, num_chunks_after=1
    )
    out = _np(layer(x, padding_mask=mask))
    expected = _full_shared_qk_reference(layer, x, mask)
    np.testing.assert_allclose(_real(out, mask), _real(expected, mask), atol=1e-5)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_buckets=4, chunk_length=4),
        dict(num_buckets=4, chunk_length=4, num_hashes=2, num_chunks_after=1),
        dict(num_buckets=2, chunk_length=3, num_hashes=2, causal=True),
        dict(num_buckets=1, chunk_length=4, num_chunks_before=0),
    ],
)
def test_matches_numpy_lsh_reference(kwargs):
    x, mask = _inputs(length=14, seed=1)
    layer = _layer(**kwargs)
    out = _np(layer(x, padding_mask=mask))
    expected = _lsh_reference(layer, x, mask)
    np.testing.assert_allclose(_real(out, mask), _real(expected, mask), atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_outputs_do_not_depend_on_padding(causal):
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2, causal=causal)
    x, _ = _inputs(batch=1, length=13, seed=2)
    real = 9
    right = np.array([[1] * real + [0] * 4], "int32")
    base = _np(layer(x, padding_mask=right))[0, :real]

    # Other contents in the padded positions.
    noisy = x.copy()
    noisy[:, real:] = np.random.default_rng(3).normal(size=(1, 4, HIDDEN)) * 10
    other = _np(layer(noisy, padding_mask=right))[0, :real]
    np.testing.assert_allclose(other, base, atol=1e-5)

    # Padding in front instead of behind (and in a shuffled order).
    left = np.concatenate([noisy[:, real:][:, ::-1], x[:, :real]], axis=1)
    left_mask = np.array([[0] * 4 + [1] * real], "int32")
    moved = _np(layer(left, padding_mask=left_mask))[0, 4:]
    np.testing.assert_allclose(moved, base, atol=1e-5)


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(num_chunks_after=1), dict(causal=True), dict(num_chunks_before=2)],
)
def test_outputs_do_not_depend_on_how_much_padding(kwargs):
    # 8 real tokens fill exactly two chunks of 4: alone, the first chunk's
    # look-back would wrap onto real tokens; padded, onto padding.
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2, **kwargs)
    x, _ = _inputs(batch=1, length=21, seed=4)
    real = 8
    exact = _np(layer(x[:, :real]))[0]
    for length in (12, 13, 21):
        mask = np.array([[1] * real + [0] * (length - real)], "int32")
        padded = _np(layer(x[:, :length], padding_mask=mask))[0, :real]
        np.testing.assert_allclose(padded, exact, atol=1e-5)


def test_without_mask_equals_all_ones_mask():
    x, _ = _inputs(length=10)
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2)
    np.testing.assert_allclose(
        _np(layer(x)),
        _np(layer(x, padding_mask=np.ones((2, 10), "int32"))),
        atol=1e-6,
    )


def test_causal_ignores_later_tokens():
    # Without hashing, chunks are fixed by position, so changing the future
    # cannot move earlier tokens to other chunks.
    layer = _layer(num_buckets=1, chunk_length=4, causal=True)
    x, _ = _inputs(batch=1, length=12, seed=4)
    changed = x.copy()
    changed[:, 7:] += 5.0
    a = _np(layer(x))[0, :7]
    b = _np(layer(changed))[0, :7]
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert not np.allclose(_np(layer(x))[0, 7:], _np(layer(changed))[0, 7:])


def test_token_attends_to_itself_only_when_alone():
    # Length 1: nothing else is available, so the output is the token's own
    # value projected; not NaN, and not the zero vector.
    layer = _layer(num_buckets=2, chunk_length=4)
    x, _ = _inputs(batch=1, length=1)
    out = _np(layer(x))
    value = _dense(layer.value, x)
    np.testing.assert_allclose(out, _dense(layer.output_dense, value), atol=1e-5)


def test_gradients_are_finite_and_nonzero():
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2)
    x, mask = _inputs(length=10)

    def loss_of(x):
        return ops.sum(ops.square(layer(x, padding_mask=mask, training=True)))

    grads = loss_and_gradients(layer, loss_of, x)[1:]
    names = ["inputs"] + [v.path for v in layer.trainable_variables]
    assert {v.path.split("/")[-2] for v in layer.trainable_variables} == {
        "query",
        "value",
        "output_dense",
    }
    assert len(grads) == len(names)
    for name, grad in zip(names, grads):
        assert grad is not None, name
        assert np.all(np.isfinite(grad)), name
        assert np.abs(grad).max() > 0, name


@pytest.mark.large
@pytest.mark.parametrize("jit_compile", JIT_CHOICES)
def test_compiles_with_xla(jit_compile):
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2, num_chunks_after=1)
    x, mask = _inputs(length=10)
    eager = _np(layer(x, padding_mask=mask))
    compiled = run(lambda a, m: layer(a, padding_mask=m), x, mask, mode=jit_mode(jit_compile))
    np.testing.assert_allclose(compiled, eager, atol=1e-5)
    expected = _lsh_reference(layer, x, mask)
    np.testing.assert_allclose(_real(compiled, mask), _real(expected, mask), atol=1e-5)


def test_runs_with_unknown_batch_and_length():
    # Keras traces functional models with unknown batch and length.
    layer = _layer(num_buckets=4, chunk_length=4, num_hashes=2, num_chunks_after=1)
    x, mask = _inputs(length=10)
    eager = _np(layer(x, padding_mask=mask))
    hidden = keras.Input((None, HIDDEN))
    padding_mask = keras.Input((None,), dtype="int32")
    model = keras.Model([hidden, padding_mask], layer(hidden, padding_mask=padding_mask))
    assert tuple(model.output.shape) == (None, None, HIDDEN)
    np.testing.assert_allclose(model.predict([x, mask], verbose=0), eager, atol=1e-5)


def test_same_seed_same_outputs():
    x, mask = _inputs(length=10)
    a = _layer(num_buckets=4, chunk_length=4, seed=7)
    b = _layer(num_buckets=4, chunk_length=4, seed=7)
    c = _layer(num_buckets=4, chunk_length=4, seed=8)
    a(x), b(x), c(x)
    np.testing.assert_array_equal(_np(a.rotations), _np(b.rotations))
    assert not np.allclose(_np(a.rotations), _np(c.rotations))
    for layer in (b, c):
        for name in ("query", "value", "output_dense"):
            getattr(layer, name).set_weights(getattr(a, name).get_weights())
    out_a = _np(a(x, padding_mask=mask))
    np.testing.assert_array_equal(out_a, _np(b(x, padding_mask=mask)))
    assert not np.allclose(out_a, _np(c(x, padding_mask=mask)))
    # Calls repeat exactly.
    np.testing.assert_array_equal(out_a, _np(a(x, padding_mask=mask)))


def test_redrawn_rotations_are_training_only_and_seeded():
    x, _ = _inputs(length=16)
    a = _layer(num_buckets=8, chunk_length=4, seed=5, redraw_rotations=True)
    b = _layer(num_buckets=8, chunk_length=4, seed=5, redraw_rotations=True)
    a(x), b(x)
    for name in ("query", "value", "output_dense"):
        getattr(b, name).set_weights(getattr(a, name).get_weights())
    train_a = [_np(a(x, training=True)) for _ in range(3)]
    train_b = [_np(b(x, training=True)) for _ in range(3)]
    for one, other in zip(train_a, train_b):
        np.testing.assert_array_equal(one, other)
    assert not np.allclose(train_a[0], train_a[1])
    # Inference keeps the saved rotations.
    np.testing.assert_array_equal(_np(a(x)), _np(a(x)))
    np.testing.assert_array_equal(_np(a(x)), _np(b(x)))


def test_config_round_trip_and_weights():
    layer = _layer(
        num_hashes=2,
        num_buckets=4,
        chunk_length=4,
        num_chunks_before=2,
        num_chunks_after=1,
        causal=True,
        seed=3,
        redraw_rotations=True,
    )
    x, mask = _inputs(length=10)
    out = _np(layer(x, padding_mask=mask))
    config = layer.get_config()
    clone = AlbertLSHSelfAttention.from_config(config)
    assert clone.get_config() == config
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(_np(clone(x, padding_mask=mask)), out, atol=1e-6)
    # Shared QK lives in `query`; there is no `key` to warm-start.
    paths = sorted(w.path.split("/", 1)[1] for w in layer.weights)
    assert paths == sorted(
        ["rotations"]
        + [
            f"{d}/{v}"
            for d in ("query", "value", "output_dense")
            for v in ("kernel", "bias")
        ]
    )


def test_mixed_precision_runs_in_float32_softmax():
    x, mask = _inputs(length=10)
    full = _layer(num_buckets=1, chunk_length=16)
    mixed = _layer(num_buckets=1, chunk_length=16, dtype="mixed_bfloat16")
    full(x), mixed(x)
    mixed.set_weights(full.get_weights())
    out = mixed(x, padding_mask=mask)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    np.testing.assert_allclose(
        _np(ops.cast(out, "float32")),
        _np(full(x, padding_mask=mask)),
        # bfloat16 keeps 8 bits of mantissa: a value near 4 is off by up to
        # 0.03 from rounding alone, so the bound is relative as well.
        atol=0.05,
        rtol=0.02,
    )


def test_registered_and_used_by_backbone():
    import keras_albert

    layer = make_attention(
        "lsh", num_heads=2, hidden_dim=8, num_buckets=4, chunk_length=4
    )
    assert isinstance(layer, AlbertLSHSelfAttention)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=50,
        num_layers=2,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
        attention="lsh",
        attention_kwargs={"num_buckets": 4, "chunk_length": 4, "seed": 1},
    )
    token_ids = np.random.default_rng(0).integers(5, 50, (2, 10)).astype("int32")
    padding_mask = np.ones((2, 10), "int32")
    padding_mask[1, 7:] = 0
    inputs = {
        "token_ids": token_ids,
        "segment_ids": np.zeros((2, 10), "int32"),
        "padding_mask": padding_mask,
    }
    out = _np(backbone(inputs)["sequence_output"])
    assert out.shape == (2, 10, 16) and np.all(np.isfinite(out))
    restored = keras_albert.AlbertBackbone.from_config(backbone.get_config())
    restored.set_weights(backbone.get_weights())
    np.testing.assert_allclose(
        _np(restored(inputs)["sequence_output"]), out, atol=1e-5
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_buckets=3), "num_buckets=3"),
        (dict(num_buckets=0), "num_buckets=0"),
        (dict(chunk_length=0), "chunk_length=0"),
        (dict(num_hashes=0), "num_hashes=0"),
        (dict(num_chunks_before=-1), "num_chunks_before=-1"),
        (dict(num_chunks_after=1.5), "num_chunks_after=1.5"),
        (dict(causal="yes"), "causal='yes'"),
        (dict(seed="a"), "seed='a'"),
    ],
)
def test_invalid_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _layer(**kwargs)


def test_sort_keys_must_fit_int32():
    layer = AlbertLSHSelfAttention(
        num_heads=1, hidden_dim=2, num_buckets=2**21, chunk_length=1024
    )
    with pytest.raises(ValueError, match="num_buckets=2097152"):
        layer(np.zeros((1, 1000, 2), "float32"))


@pytest.mark.parametrize("length, chunk", [(100, 64), (4096, 64), (4097, 64), (12000, 64), (16384, 64), (3000, 32)])
def test_reformer_buckets_are_two_per_chunk_and_factorised_when_many(length, chunk):
    from keras_albert.layers import reformer_num_buckets

    buckets = reformer_num_buckets(length, chunk)
    chunks = -(-length // chunk)
    if 2 * chunks <= 2 * chunk:
        assert buckets == max(2, 2 * chunks)
    else:
        first, second = buckets
        total = first * second
        # A power of two, at most two per chunk and more than one per chunk.
        assert total & (total - 1) == 0 and chunks < total <= 2 * chunks
        assert first % 2 == 0 and second % 2 == 0 and first <= second <= 2 * first
        # Hashing needs far fewer rotation columns than one factor would.
        assert (first + second) // 2 < total // 8
        layer = AlbertLSHSelfAttention(num_heads=1, hidden_dim=4, num_buckets=buckets, chunk_length=chunk)
        assert layer.num_buckets == buckets
