"""MobileBERT-style layers: NoNorm, bottleneck blocks, stacked FFN, trigram embedding."""

import numpy as np
import pytest

from keras_albert.layers import AlbertBottleneckAttention
from keras_albert.layers import AlbertBottleneckTransformerBlock
from keras_albert.layers import AlbertSelfAttention
from keras_albert.layers import AlbertStackedFeedForward
from keras_albert.layers import AlbertTrigramEmbedding
from keras_albert.layers import NoNorm
from tests.harness import run_serialization_test


def dense(n_in, n_out):
    return n_in * n_out + n_out


def test_no_norm_is_an_elementwise_scale_and_shift():
    layer = NoNorm()
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    layer.build(x.shape)
    assert layer.count_params() == 8
    layer.gamma.assign([1.0, 2.0, 3.0, 4.0])
    layer.beta.assign([0.5, 0.0, -1.0, 2.0])
    np.testing.assert_allclose(
        layer(x), x * np.array([1, 2, 3, 4]) + np.array([0.5, 0, -1, 2]), rtol=1e-6
    )


def test_bottleneck_block_shapes_and_parameter_count():
    hidden, bottleneck, intermediate, stacks = 16, 8, 12, 3
    block = AlbertBottleneckTransformerBlock(
        num_heads=2, hidden_dim=hidden, intermediate_dim=intermediate,
        bottleneck_dim=bottleneck, num_feedforward_stacks=stacks)
    x = np.random.default_rng(0).normal(size=(2, 5, hidden)).astype("float32")
    output, probabilities = block(x, padding_mask=np.ones((2, 5), "int32"), return_attention=True)
    assert output.shape == (2, 5, hidden)
    assert probabilities.shape == (2, 2, 5, 5)
    np.testing.assert_allclose(np.sum(probabilities, -1), 1.0, rtol=1e-5)
    attention_half = (
        2 * (dense(hidden, bottleneck) + 2 * bottleneck)  # input and query/key bottlenecks
        + 3 * dense(bottleneck, bottleneck)  # query, key, output
        + dense(hidden, bottleneck)  # value, from the block input
        + 2 * bottleneck  # norm
    )
    feed_forward_half = (
        stacks * (dense(bottleneck, intermediate) + dense(intermediate, bottleneck) + 2 * bottleneck)
        + dense(bottleneck, hidden) + 2 * hidden
    )
    assert block.count_params() == attention_half + feed_forward_half
    attention = block.attention_sublayer.attention_layer
    # MobileBERT: queries and keys read the bottleneck, values the input.
    assert tuple(attention.query.kernel.shape) == (bottleneck, bottleneck)
    assert tuple(attention.value.kernel.shape) == (hidden, bottleneck)


def test_stacked_feed_forward_parameter_count():
    layer = AlbertStackedFeedForward(width=8, intermediate_dim=16, num_stacks=4,
                                     normalization="no_norm")
    assert layer(np.ones((1, 3, 8), "float32")).shape == (1, 3, 8)
    assert layer.count_params() == 4 * (dense(8, 16) + dense(16, 8) + 16)


def test_trigram_embedding_sees_exactly_its_neighbours():
    layer = AlbertTrigramEmbedding(50, 4, 16, max_sequence_length=10)
    tokens = np.array([[5, 6, 7, 8, 9, 10]], "int32")
    segments = np.zeros_like(tokens)
    before = np.asarray(layer(tokens, segments))
    changed = tokens.copy()
    changed[0, 3] = 20
    after = np.asarray(layer(changed, segments))
    moved = np.abs(after - before).max(-1)[0] > 1e-6
    assert moved.tolist() == [False, False, True, True, True, False]
    # Token matrix at E; the projection reads three neighbours.
    assert tuple(layer.token_embedding.embeddings.shape) == (50, 4)
    assert tuple(layer.projection.kernel.shape) == (12, 16)


def test_trigram_embedding_ignores_how_far_a_text_is_padded():
    layer = AlbertTrigramEmbedding(50, 4, 16, max_sequence_length=10)
    tokens = np.array([[2, 6, 7, 3]], "int32")
    exact = np.asarray(layer(tokens, np.zeros_like(tokens), padding_mask=np.ones_like(tokens)))
    # The same text padded to 7, padding holding <pad> or any other id.
    for filler in (0, 9):
        padded = np.concatenate([tokens, np.full((1, 3), filler, "int32")], axis=1)
        mask = np.array([[1, 1, 1, 1, 0, 0, 0]], "int32")
        out = np.asarray(layer(padded, np.zeros_like(padded), padding_mask=mask))
        np.testing.assert_allclose(out[:, :4], exact, atol=1e-6)
    # Without a mask, past the end reads as <pad> too.
    np.testing.assert_allclose(np.asarray(layer(tokens, np.zeros_like(tokens))), exact, atol=1e-6)


def test_bottleneck_attention_probabilities_respect_padding():
    layer = AlbertBottleneckAttention(num_heads=2, attention_dim=4)
    rng = np.random.default_rng(0)
    mask = np.array([[1, 1, 1, 0]], "int32")
    _, probabilities = layer(rng.normal(size=(1, 4, 4)).astype("float32"),
                             rng.normal(size=(1, 4, 8)).astype("float32"),
                             padding_mask=mask, return_attention=True)
    assert np.all(np.asarray(probabilities)[..., 3] == 0.0)


def test_self_attention_returns_the_probabilities_it_used():
    layer = AlbertSelfAttention(num_heads=2, hidden_dim=8)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "int32")
    expected = np.asarray(layer(x, padding_mask=mask))
    output, probabilities = layer(x, padding_mask=mask, return_attention=True)
    np.testing.assert_array_equal(np.asarray(output), expected)
    probabilities = np.asarray(probabilities)
    assert probabilities.shape == (2, 2, 5, 5) and probabilities.dtype == np.float32
    assert np.all(probabilities[1, ..., 3:] == 0.0)  # padded keys
    # Recombining the values with them gives the layer's output back.
    value = np.asarray(layer.value(x)).reshape(2, 5, 2, 4)
    context = np.einsum("bnqk,bknd->bqnd", probabilities, value).reshape(2, 5, 8)
    np.testing.assert_allclose(np.asarray(layer.output_dense(context)), expected, atol=1e-5)


@pytest.mark.parametrize(
    "layer",
    [
        lambda: NoNorm(),
        lambda: AlbertBottleneckAttention(num_heads=2, attention_dim=4, attention_dropout=0.1),
        lambda: AlbertStackedFeedForward(width=8, intermediate_dim=4, num_stacks=2,
                                         activation="relu", normalization="no_norm"),
        lambda: AlbertTrigramEmbedding(30, 4, 8, max_sequence_length=6, normalization="no_norm"),
        lambda: AlbertBottleneckTransformerBlock(
            num_heads=2, hidden_dim=8, intermediate_dim=4, bottleneck_dim=4,
            num_feedforward_stacks=2, normalization="layer_norm", activation="gelu"),
    ],
)
def test_config_round_trip_through_the_registry(layer):
    # Both get_config/from_config and the "keras_albert>" registry entry.
    run_serialization_test(layer())


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="normalization"):
        AlbertStackedFeedForward(width=8, intermediate_dim=4, normalization="batch_norm")
    with pytest.raises(ValueError, match="attention_dim"):
        AlbertBottleneckAttention(num_heads=3, attention_dim=8)
    with pytest.raises(ValueError, match="bottleneck_dim"):
        AlbertBottleneckTransformerBlock(num_heads=2, hidden_dim=8, intermediate_dim=4,
                                         bottleneck_dim=0)
