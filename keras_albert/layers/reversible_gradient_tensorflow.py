"""The reversible encoder's gradient on the TensorFlow backend.

Imported by `AlbertReversibleEncoder` only when Keras runs on TensorFlow.
"""

import tensorflow as tf


def reversible_outputs(encoder, hidden_states, padding_mask):
    has_mask = padding_mask is not None
    mask = padding_mask if has_mask else tf.zeros((), "int32")

    @tf.custom_gradient
    def run(x, mask):
        block_mask = mask if has_mask else None
        outputs, y1, y2 = encoder.forward_streams(x, block_mask)
        # Only the last block's streams are kept for the backward pass.
        last = (tf.identity(y1), tf.identity(y2))

        def backward(*output_grads, variables=None):
            y1, y2 = last
            dy1 = tf.zeros_like(y1)
            dy2 = tf.zeros_like(y2)
            gradients = {}
            for owners, layer_grad in encoder.reversed_blocks(output_grads):
                # A layer's output is (y1 + y2) / 2.
                if layer_grad is not None:
                    dy1, dy2 = dy1 + layer_grad * 0.5, dy2 + layer_grad * 0.5
                y1, y2, dy1, dy2 = _reverse_block(
                    encoder, owners, y1, y2, dy1, dy2, block_mask, gradients
                )
            variable_grads = [
                gradients.get(variable.ref()) for variable in variables or []
            ]
            return (dy1 + dy2, None), variable_grads

        return outputs, backward

    return run(hidden_states, mask)


def _reverse_block(encoder, owners, y1, y2, dy1, dy2, mask, gradients):
    """Rebuilds one block's inputs from its outputs and back-propagates
    `(dy1, dy2)` through it; adds its weight gradients to `gradients`."""
    # The rebuild needs no gradient, so in a graph the executor could run
    # every block's rebuild right after the forward pass and hold all of
    # them at once, or put off the later blocks' weight gradients (and
    # keep their activations). Waiting for this block's output gradients
    # and every weight gradient so far keeps one block alive at a time.
    with tf.control_dependencies([dy1, dy2] + list(gradients.values())):
        y1, y2 = tf.identity(y1), tf.identity(y2)
    attention, feed_forward = encoder.sublayers_of(owners)
    feed_forward_variables = [v.value for v in feed_forward.trainable_variables]
    attention_variables = [v.value for v in attention.trainable_variables]
    with tf.GradientTape() as tape:
        tape.watch(y1)
        g = encoder._feed_forward_branch(owners[1], y1)
    x2 = y2 - g
    grads = tape.gradient(g, [y1] + feed_forward_variables, output_gradients=dy2)
    dy1 = dy1 + grads[0]
    _accumulate(gradients, feed_forward_variables, grads[1:])
    with tf.GradientTape() as tape:
        tape.watch(x2)
        f = encoder._attention_branch(owners[0], x2, mask)
    x1 = y1 - f
    grads = tape.gradient(f, [x2] + attention_variables, output_gradients=dy1)
    dx2 = dy2 + grads[0]
    _accumulate(gradients, attention_variables, grads[1:])
    return x1, x2, dy1, dx2


def _accumulate(gradients, variables, grads):
    for variable, grad in zip(variables, grads):
        if grad is None:
            continue
        if isinstance(grad, tf.IndexedSlices):
            grad = tf.convert_to_tensor(grad)
        key = variable.ref()
        gradients[key] = grad if key not in gradients else gradients[key] + grad
