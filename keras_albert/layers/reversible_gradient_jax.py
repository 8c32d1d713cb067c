"""The reversible encoder's gradient on the JAX backend.

Imported by `AlbertReversibleEncoder` only when Keras runs on JAX. A
`jax.custom_vjp` may not close over values it differentiates, so the
encoder's variables enter as explicit arguments and each branch runs in a
`keras.StatelessScope` that maps the variables to them (what Keras's own
`stateless_call` does).
"""

import jax
import jax.numpy as jnp
import keras


def reversible_outputs(encoder, hidden_states, padding_mask):
    variables = list(encoder.variables)
    has_mask = padding_mask is not None
    # A float mask has a zero cotangent of its own; an integer one would
    # need JAX's float0.
    mask = (
        jnp.asarray(padding_mask, "float32") if has_mask else jnp.zeros((), "float32")
    )

    def scoped(values):
        return keras.StatelessScope(state_mapping=list(zip(variables, values)))

    def forward(x, mask, values):
        with scoped(values):
            return encoder.forward_streams(x, mask if has_mask else None)

    @jax.custom_vjp
    def run(x, mask, values):
        return forward(x, mask, values)[0]

    def run_forward(x, mask, values):
        outputs, y1, y2 = forward(x, mask, values)
        # Only the last block's streams are kept for the backward pass.
        return outputs, (y1, y2, mask, values)

    def run_backward(residuals, output_grads):
        y1, y2, mask, values = residuals
        block_mask = mask if has_mask else None
        dy1 = jnp.zeros_like(y1)
        dy2 = jnp.zeros_like(y2)
        dvalues = [jnp.zeros_like(v) for v in values]
        for owners, layer_grad in encoder.reversed_blocks(output_grads):
            # A layer's output is (y1 + y2) / 2.
            if layer_grad is not None:
                dy1, dy2 = dy1 + layer_grad * 0.5, dy2 + layer_grad * 0.5

            def feed_forward(y, values, owner=owners[1]):
                with scoped(values):
                    return encoder._feed_forward_branch(owner, y)

            def attention(x, values, owner=owners[0]):
                with scoped(values):
                    return encoder._attention_branch(owner, x, block_mask)

            g, pullback = jax.vjp(feed_forward, y1, values)
            x2 = y2 - g
            d_input, d_values = pullback(dy2)
            dy1 = dy1 + d_input
            dvalues = _add(dvalues, d_values)
            f, pullback = jax.vjp(attention, x2, values)
            x1 = y1 - f
            d_input, d_values = pullback(dy1)
            dy2 = dy2 + d_input
            dvalues = _add(dvalues, d_values)
            y1, y2 = x1, x2
        return dy1 + dy2, jnp.zeros_like(mask), dvalues

    run.defvjp(run_forward, run_backward)
    values = [variable.value for variable in variables]
    return run(hidden_states, mask, values)


def _add(totals, grads):
    # Integer variables (LSH's fixed rotations are floats, but a seed
    # counter would not be) get float0 cotangents: keep the zeros.
    return [
        total if grad.dtype == jax.dtypes.float0 else total + grad
        for total, grad in zip(totals, grads)
    ]
