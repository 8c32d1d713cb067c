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

import keras
import tensorflow as tf

from keras_albert.layers.shared_encoder import AlbertEncoder


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
        x1 = x2 = hidden_states
        outputs = []
        for inner_plan in self._owners():
            for attention_owner, feed_forward_owner in inner_plan:
                x1 = x1 + self._attention_branch(attention_owner, x2, padding_mask)
                x2 = x2 + self._feed_forward_branch(feed_forward_owner, x1)
            outputs.append((x1 + x2) * 0.5)
        return outputs

    def _reversible_outputs(self, hidden_states, padding_mask):
        blocks = [owners for inner in self._owners() for owners in inner]
        per_layer = [len(inner) for inner in self._owners()]
        has_mask = padding_mask is not None
        mask = padding_mask if has_mask else tf.zeros((), "int32")

        @tf.custom_gradient
        def run(x, mask):
            block_mask = mask if has_mask else None
            x1 = x2 = x
            outputs = []
            index = 0
            for count in per_layer:
                for owners in blocks[index:index + count]:
                    x1 = x1 + self._attention_branch(owners[0], x2, block_mask)
                    x2 = x2 + self._feed_forward_branch(owners[1], x1)
                index += count
                outputs.append((x1 + x2) * 0.5)
            # Only the last block's streams are kept for the backward pass.
            last = (tf.identity(x1), tf.identity(x2))

            def backward(*output_grads, variables=None):
                y1, y2 = last
                dy1 = tf.zeros_like(y1)
                dy2 = tf.zeros_like(y2)
                gradients = {}
                index = len(blocks)
                for layer in reversed(range(len(per_layer))):
                    # A layer's output is (y1 + y2) / 2.
                    if output_grads[layer] is not None:
                        half = output_grads[layer] * 0.5
                        dy1, dy2 = dy1 + half, dy2 + half
                    for owners in reversed(blocks[index - per_layer[layer]:index]):
                        y1, y2, dy1, dy2 = self._reverse_block(
                            owners, y1, y2, dy1, dy2, block_mask, gradients
                        )
                    index -= per_layer[layer]
                variable_grads = [
                    gradients.get(variable.ref()) for variable in variables or []
                ]
                return (dy1 + dy2, None), variable_grads

            return outputs, backward

        return run(hidden_states, mask)

    def _reverse_block(self, owners, y1, y2, dy1, dy2, mask, gradients):
        """Rebuilds one block's inputs from its outputs and back-propagates
        `(dy1, dy2)` through it; adds its weight gradients to `gradients`."""
        # The rebuild needs no gradient, so in a graph the executor could run
        # every block's rebuild right after the forward pass and hold all of
        # them at once, or put off the later blocks' weight gradients (and
        # keep their activations). Waiting for this block's output gradients
        # and every weight gradient so far keeps one block alive at a time.
        with tf.control_dependencies([dy1, dy2] + list(gradients.values())):
            y1, y2 = tf.identity(y1), tf.identity(y2)
        attention = self.attention_sublayers[owners[0]]
        feed_forward = self.feed_forward_sublayers[owners[1]]
        feed_forward_variables = [v.value for v in feed_forward.trainable_variables]
        attention_variables = [v.value for v in attention.trainable_variables]
        with tf.GradientTape() as tape:
            tape.watch(y1)
            g = self._feed_forward_branch(owners[1], y1)
        x2 = y2 - g
        grads = tape.gradient(
            g, [y1] + feed_forward_variables, output_gradients=dy2
        )
        dy1 = dy1 + grads[0]
        self._accumulate(gradients, feed_forward_variables, grads[1:])
        with tf.GradientTape() as tape:
            tape.watch(x2)
            f = self._attention_branch(owners[0], x2, mask)
        x1 = y1 - f
        grads = tape.gradient(
            f, [x2] + attention_variables, output_gradients=dy1
        )
        dx2 = dy2 + grads[0]
        self._accumulate(gradients, attention_variables, grads[1:])
        return x1, x2, dy1, dx2

    @staticmethod
    def _accumulate(gradients, variables, grads):
        for variable, grad in zip(variables, grads):
            if grad is None:
                continue
            if isinstance(grad, tf.IndexedSlices):
                grad = tf.convert_to_tensor(grad)
            key = variable.ref()
            gradients[key] = grad if key not in gradients else gradients[key] + grad

    def call(self, hidden_states, padding_mask=None, training=False):
        if training:
            return list(self._reversible_outputs(hidden_states, padding_mask))
        return self.reference_outputs(hidden_states, padding_mask)

    def outputs_and_attention(self, hidden_states, padding_mask=None, training=False):
        raise NotImplementedError(
            "Attention probabilities are not available from reversible layers."
        )
