"""Reversible residual encoder (Reformer's RevNet blocks) for ALBERT.

Each block keeps two streams and updates them as

    Y1 = X1 + F(X2),    F(x) = Attention(LayerNorm_a(x))
    Y2 = X2 + G(Y1),    G(x) = FeedForward(LayerNorm_f(x))

so its inputs can be rebuilt from its outputs, `X2 = Y2 - G(Y1)` and
`X1 = Y1 - F(X2)`. Training therefore needs to keep only the last block's
two streams: the backward pass walks the blocks in reverse, rebuilds each
block's inputs and recomputes its activations just in time. Activation
memory stays that of one block, whatever the depth.

F and G use the standard block's own weights (attention, feed-forward, and
the LayerNorm each sublayer owns, applied before the branch as Reformer does
instead of after the residual), so every sharing strategy and every preset
layout carries over unchanged: a weight used by several virtual layers
simply collects the gradients of all of them. Both streams start as the
embedding output; a layer's output is the mean of its two streams.

The rebuild `X = Y - F(...)` is exact only if F and G are deterministic
between the forward and the backward pass, so dropout and LSH rotations
redrawn per step are refused (ALBERT v2 trains without dropout).
"""

import importlib

import keras

from keras_albert.layers.shared_encoder import AlbertEncoder

_GRADIENT_MODULES = {
    name: f"keras_albert.layers.reversible_gradient_{name}"
    for name in ("tensorflow", "jax", "torch")
}


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertReversibleEncoder(AlbertEncoder):
    """`AlbertEncoder` with reversible residual blocks (same arguments,
    same weights); see the module docstring.

    With `training=True` the gradient is computed by reversing the blocks
    (one custom gradient for the whole stack); otherwise, or with
    `recompute=False` in `reference_outputs`, plain autodiff runs the same
    arithmetic (the tests compare both).

    Example:
    >>> encoder = AlbertReversibleEncoder(num_layers=4, num_heads=2,
    ...                                   hidden_dim=8, intermediate_dim=16)
    >>> outputs = encoder(np.ones((1, 3, 8), "float32"), training=True)
    >>> len(outputs), tuple(outputs[-1].shape)
    (4, (1, 3, 8))
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.uses_bottleneck_blocks:
            raise ValueError(
                "Reversible layers work with ALBERT's blocks only, not the "
                "MobileBERT options (`normalization`, `bottleneck_dim`, "
                "`num_feedforward_stacks`)."
            )
        if self.dropout or self.attention_dropout:
            raise ValueError(
                "Reversible layers recompute activations in the backward "
                "pass and need deterministic blocks: use dropout=0 and "
                f"attention_dropout=0. Received: dropout={self.dropout}, "
                f"attention_dropout={self.attention_dropout}"
            )
        if self.attention_kwargs.get("redraw_rotations"):
            raise ValueError(
                "Reversible layers need the same LSH rotations in the forward "
                "and backward pass. Received: redraw_rotations=True"
            )

    # === The two branches ===
    def _attention_branch(self, owner, x, padding_mask):
        sublayer = self.attention_sublayers[owner]
        return sublayer.attention_layer(
            sublayer.layer_norm(x), padding_mask=padding_mask
        )

    def _feed_forward_branch(self, owner, x):
        sublayer = self.feed_forward_sublayers[owner]
        hidden = sublayer.intermediate_dense(sublayer.layer_norm(x))
        return sublayer.output_dense(hidden)

    def _owners(self):
        """Per virtual layer, the list of `(attention, ffn)` owners."""
        return self.plan

    def reference_outputs(self, hidden_states, padding_mask=None):
        """Every layer's output by plain autodiff (activations stored)."""
        return self.forward_streams(hidden_states, padding_mask)[0]

    def block_owners(self):
        """`(blocks, per_layer)`: the `(attention, ffn)` owners of every
        block in order, and how many blocks each virtual layer runs."""
        blocks = [owners for inner in self._owners() for owners in inner]
        return blocks, [len(inner) for inner in self._owners()]

    def forward_streams(self, hidden_states, padding_mask):
        """Every layer's output and the last block's two streams."""
        blocks, per_layer = self.block_owners()
        x1 = x2 = hidden_states
        outputs = []
        index = 0
        for count in per_layer:
            for owners in blocks[index:index + count]:
                x1 = x1 + self._attention_branch(owners[0], x2, padding_mask)
                x2 = x2 + self._feed_forward_branch(owners[1], x1)
            index += count
            outputs.append((x1 + x2) * 0.5)
        return outputs, x1, x2

    def reversed_blocks(self, output_grads):
        """Walks the blocks backwards: yields `(owners, layer_grad)` where
        `layer_grad` is the gradient of the layer that ends at that block
        (None inside a layer). The backends' gradients share this order."""
        blocks, per_layer = self.block_owners()
        index = len(blocks)
        for layer in reversed(range(len(per_layer))):
            first = True
            for owners in reversed(blocks[index - per_layer[layer]:index]):
                yield owners, output_grads[layer] if first else None
                first = False
            index -= per_layer[layer]

    def sublayers_of(self, owners):
        return (
            self.attention_sublayers[owners[0]],
            self.feed_forward_sublayers[owners[1]],
        )

    def _reversible_outputs(self, hidden_states, padding_mask):
        # The gradient needs each framework's own autodiff: the module of
        # the running backend is imported here, so the others (TensorFlow
        # included) are never needed.
        backend = keras.config.backend()
        if backend not in _GRADIENT_MODULES:
            raise ValueError(
                "Reversible layers train on the tensorflow, jax and torch "
                f"backends. Received: KERAS_BACKEND={backend!r}"
            )
        module = importlib.import_module(_GRADIENT_MODULES[backend])
        return module.reversible_outputs(self, hidden_states, padding_mask)

    def call(self, hidden_states, padding_mask=None, training=False):
        if training:
            return list(self._reversible_outputs(hidden_states, padding_mask))
        return self.reference_outputs(hidden_states, padding_mask)

    def outputs_and_attention(self, hidden_states, padding_mask=None, training=False):
        raise NotImplementedError(
            "Attention probabilities are not available from reversible layers."
        )
