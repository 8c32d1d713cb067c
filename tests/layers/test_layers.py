import keras
import numpy as np
import pytest

from keras_albert import layers
from tests.harness import run_layer_test


def _reference_attention(x, mask, attention):
    """NumPy multi-head attention with the layer's own weights."""
    def dense(layer, value):
        return value @ layer.kernel.numpy() + layer.bias.numpy()

    heads, width = attention.num_heads, attention.head_dim
    q, k, v = (dense(getattr(attention, n), x) for n in ("query", "key", "value"))
    split = lambda t: t.reshape(t.shape[0], t.shape[1], heads, width).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(width)
    scores = np.where(mask[:, None, None, :] > 0, scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(x.shape)
    return dense(attention.output_dense, context)


def test_self_attention_matches_numpy_reference():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], "int32")
    attention = layers.AlbertSelfAttention(num_heads=2, hidden_dim=8)
    out = keras.ops.convert_to_numpy(attention(x, padding_mask=mask))
    np.testing.assert_allclose(out, _reference_attention(x, mask, attention), atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_path_gives_the_reference_with_a_full_mask(monkeypatch, causal):
    # On JAX the fused path must hand ops.dot_product_attention a
    # [batch, 1, query, key] mask: cuDNN refuses one broadcast over queries
    # and Keras silently falls back to a slower kernel (seen on an H200).
    shapes = []
    real = keras.ops.dot_product_attention

    def recording(query, key, value, mask=None, **kwargs):
        shapes.append(tuple(mask.shape))
        return real(query, key, value, mask=mask, **kwargs)

    monkeypatch.setattr(keras.ops, "dot_product_attention", recording)
    monkeypatch.setattr(layers.AlbertSelfAttention, "_fused", lambda self, training, attention: True)
    monkeypatch.setattr(keras.config, "backend", lambda: "jax")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], "int32")
    fused = layers.AlbertSelfAttention(num_heads=2, hidden_dim=8, causal=causal)
    out = keras.ops.convert_to_numpy(fused(x, padding_mask=mask))
    assert shapes == [(2, 1, 5, 5)]
    monkeypatch.undo()
    explicit = layers.AlbertSelfAttention(num_heads=2, hidden_dim=8, causal=causal)
    explicit.build(x.shape)
    explicit.set_weights(fused.get_weights())
    expected = keras.ops.convert_to_numpy(explicit(x, padding_mask=mask))
    np.testing.assert_allclose(out[1, :2], expected[1, :2], atol=1e-5)
    np.testing.assert_allclose(out[0], expected[0], atol=1e-5)


def test_padding_keys_are_ignored():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 6, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 0, 0]], "int32")
    attention = layers.AlbertSelfAttention(num_heads=2, hidden_dim=8)
    changed = x.copy()
    changed[:, 4:] = rng.normal(size=(1, 2, 8))
    a = keras.ops.convert_to_numpy(attention(x, padding_mask=mask))[:, :4]
    b = keras.ops.convert_to_numpy(attention(changed, padding_mask=mask))[:, :4]
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_embedding_normalises_at_width_e_then_projects():
    embedding = layers.AlbertFactorizedEmbedding(50, 6, 10, max_sequence_length=8)
    token_ids = np.array([[3, 4, 5]], "int32")
    segment_ids = np.array([[0, 0, 1]], "int32")
    out = keras.ops.convert_to_numpy(embedding(token_ids, segment_ids))
    assert out.shape == (1, 3, 10)
    summed = (
        embedding.token_embedding.embeddings.numpy()[token_ids[0]]
        + embedding.position_embeddings.numpy()[:3]
        + embedding.segment_embedding.embeddings.numpy()[segment_ids[0]]
    )
    normed = (summed - summed.mean(-1, keepdims=True)) / np.sqrt(
        summed.var(-1, keepdims=True) + 1e-12
    )
    expected = normed @ embedding.projection.kernel.numpy() + embedding.projection.bias.numpy()
    np.testing.assert_allclose(out[0], expected, atol=1e-5)
    assert embedding.layer_norm.epsilon == 1e-12


def test_embedding_rejects_sequences_longer_than_max():
    embedding = layers.AlbertFactorizedEmbedding(50, 6, 10, max_sequence_length=4)
    with pytest.raises(ValueError, match="max_sequence_length=4"):
        embedding(np.ones((1, 5), "int32"), np.zeros((1, 5), "int32"))
    # The message names the way to more positions, at the length received.
    with pytest.raises(ValueError, match=r"keras_albert\.extend_positions\(backbone, max_sequence_length=7\)"):
        embedding(np.ones((1, 7), "int32"), np.zeros((1, 7), "int32"))


def test_feed_forward_uses_tanh_gelu():
    sublayer = layers.AlbertFeedForwardSublayer(hidden_dim=4, intermediate_dim=8)
    x = np.random.default_rng(2).normal(size=(1, 3, 4)).astype("float32")
    sublayer(x)
    hidden = x @ sublayer.intermediate_dense.kernel.numpy() + sublayer.intermediate_dense.bias.numpy()
    gelu = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden**3)))
    y = x + gelu @ sublayer.output_dense.kernel.numpy() + sublayer.output_dense.bias.numpy()
    y = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(sublayer(x)), y, atol=1e-5)


def test_encoder_returns_every_layer_and_shares_weights():
    encoder = layers.AlbertEncoder(
        num_layers=6, num_heads=2, hidden_dim=8, intermediate_dim=16, num_groups=2
    )
    outputs = encoder(np.ones((1, 3, 8), "float32"))
    assert len(outputs) == 6
    assert len(encoder.attention_sublayers) == 2
    assert len(encoder.feed_forward_sublayers) == 2
    # Each of the 2 groups owns one block: 2 * (4 dense + LN) + 2 * (2 dense + LN).
    assert len(encoder.weights) == 2 * (8 + 2) + 2 * (4 + 2)


def _reference_probabilities(x, mask, attention):
    """NumPy attention probabilities [batch, heads, query, key]."""
    def dense(layer, value):
        return value @ layer.kernel.numpy() + layer.bias.numpy()

    heads, width = attention.num_heads, attention.head_dim
    split = lambda t: t.reshape(t.shape[0], t.shape[1], heads, width).transpose(0, 2, 1, 3)
    q, k = split(dense(attention.query, x)), split(dense(attention.key, x))
    scores = np.where(mask[:, None, None, :] > 0, q @ k.transpose(0, 1, 3, 2) / np.sqrt(width), -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    return probs / probs.sum(-1, keepdims=True)


def test_encoder_attention_comes_from_the_attention_layers():
    encoder = layers.AlbertEncoder(num_layers=3, num_heads=2, hidden_dim=8, intermediate_dim=16)
    x = np.random.default_rng(4).normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "int32")
    expected = [np.asarray(o) for o in encoder(x, padding_mask=mask)]
    outputs, attention = encoder.outputs_and_attention(x, padding_mask=mask)
    for mine, theirs in zip(outputs, expected):
        np.testing.assert_array_equal(np.asarray(mine), theirs)
    (shared,) = [s.attention_layer for s in encoder.attention_sublayers.values()]
    inputs = [x] + expected[:-1]  # each virtual layer reads the previous output
    for layer_input, probabilities in zip(inputs, attention):
        assert probabilities.dtype == "float32"
        np.testing.assert_allclose(
            np.asarray(probabilities), _reference_probabilities(layer_input, mask, shared), atol=1e-5
        )


def test_encoder_attention_needs_full_attention():
    encoder = layers.AlbertEncoder(
        num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16, attention="lsh",
        attention_kwargs={"num_buckets": 2, "chunk_length": 4},
    )
    x = np.ones((1, 8, 8), "float32")
    encoder(x)
    with pytest.raises(ValueError, match="full attention.*'lsh'"):
        encoder.outputs_and_attention(x)


def test_masked_lm_head_is_tied_to_embeddings():
    embedding = keras.layers.Embedding(30, 4)
    embedding.build((None,))
    head = layers.AlbertMaskedLMHead(embedding)
    sequence = np.random.default_rng(3).normal(size=(2, 5, 8)).astype("float32")
    logits = head(sequence, np.array([[0, 4], [1, 1]], "int32"))
    assert logits.shape == (2, 2, 30)
    transformed = head.layer_norm(head.transform(sequence[:, [0, 4]][:1]))
    expected = keras.ops.convert_to_numpy(transformed) @ embedding.embeddings.numpy().T + head.output_bias.numpy()
    np.testing.assert_allclose(keras.ops.convert_to_numpy(logits)[:1], expected, atol=1e-5)


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: layers.AlbertSelfAttention(num_heads=3, hidden_dim=8), "divisible"),
        (lambda: layers.AlbertSelfAttention(num_heads=0, hidden_dim=8), "num_heads"),
        (lambda: layers.AlbertFactorizedEmbedding(0, 4, 8), "vocabulary_size"),
        (lambda: layers.AlbertFeedForwardSublayer(8, 16, dropout=1.5), "dropout"),
        (lambda: layers.AlbertFeedForwardSublayer(8, 16, activation="nope"), "activation"),
        (lambda: layers.AlbertTransformerBlock(2, 8, 16, attention="sparse"), "attention"),
    ],
)
def test_bad_layer_arguments(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_attention_names_are_the_two_built_in_layers():
    from keras_albert.layers.attention_registry import available_attention
    from keras_albert.layers.attention_registry import make_attention

    assert available_attention() == ("full", "lsh")
    assert not hasattr(layers, "register_attention")  # no runtime registration
    with pytest.raises(ValueError, match=r"one of \('full', 'lsh'\).*'sparse'"):
        make_attention("sparse", num_heads=2, hidden_dim=8)


_X = np.random.default_rng(4).normal(size=(2, 5, 8)).astype("float32")
_MASK = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "int32")


@pytest.mark.parametrize(
    "cls,init_kwargs,input_data,expected_output_shape",
    [
        (layers.AlbertSelfAttention, dict(num_heads=2, hidden_dim=8),
         dict(hidden_states=_X, padding_mask=_MASK), (2, 5, 8)),
        (layers.AlbertTransformerBlock, dict(num_heads=2, hidden_dim=8, intermediate_dim=16, dropout=0.1),
         dict(hidden_states=_X, padding_mask=_MASK), (2, 5, 8)),
        (layers.AlbertEncoder,
         dict(num_layers=3, num_heads=2, hidden_dim=8, intermediate_dim=16, num_groups=2, sharing="ffn"),
         dict(hidden_states=_X, padding_mask=_MASK), [(2, 5, 8)] * 3),
        (layers.AlbertFactorizedEmbedding,
         dict(vocabulary_size=20, embedding_dim=4, hidden_dim=8, max_sequence_length=9),
         dict(token_ids=np.array([[1, 2, 3, 4, 5], [6, 7, 8, 0, 0]], "int32"),
              segment_ids=np.array([[0, 0, 1, 1, 1], [0, 0, 0, 0, 0]], "int32")),
         (2, 5, 8)),
        (layers.AlbertPooler, dict(hidden_dim=8), _X, (2, 8)),
    ],
)
def test_layer_contract(cls, init_kwargs, input_data, expected_output_shape):
    # Config and registry round trips, symbolic and eager calls, a clone
    # with the same weights, a training step and mixed precision.
    run_layer_test(cls, init_kwargs, input_data, expected_output_shape)
