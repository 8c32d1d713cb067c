"""The reversible encoder's gradient on the PyTorch backend.

Imported by `AlbertReversibleEncoder` only when Keras runs on PyTorch: a
`torch.autograd.Function` whose forward keeps no activations and whose
backward rebuilds each block's inputs and back-propagates through it.
"""

import torch


def reversible_outputs(encoder, hidden_states, padding_mask):
    parameters = [
        variable.value for variable in encoder.trainable_variables
    ]
    outputs = _ReversibleStack.apply(
        encoder, padding_mask, len(parameters), hidden_states, *parameters
    )
    return list(outputs)


class _ReversibleStack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, encoder, padding_mask, num_parameters, x, *parameters):
        # Autograd records nothing inside `forward`.
        outputs, y1, y2 = encoder.forward_streams(x, padding_mask)
        ctx.encoder = encoder
        ctx.padding_mask = padding_mask
        ctx.parameters = parameters
        ctx.save_for_backward(y1, y2)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *output_grads):
        encoder, mask, parameters = ctx.encoder, ctx.padding_mask, ctx.parameters
        y1, y2 = (t.detach() for t in ctx.saved_tensors)
        dy1 = torch.zeros_like(y1)
        dy2 = torch.zeros_like(y2)
        totals = [None] * len(parameters)
        for owners, layer_grad in encoder.reversed_blocks(output_grads):
            # A layer's output is (y1 + y2) / 2.
            if layer_grad is not None:
                dy1, dy2 = dy1 + layer_grad * 0.5, dy2 + layer_grad * 0.5
            with torch.enable_grad():
                y1 = y1.detach().requires_grad_(True)
                g = encoder._feed_forward_branch(owners[1], y1)
                grads = torch.autograd.grad(
                    g, [y1, *parameters], dy2, allow_unused=True
                )
            x2 = (y2 - g).detach()
            dy1 = dy1 + grads[0]
            totals = _add(totals, grads[1:])
            with torch.enable_grad():
                x2 = x2.requires_grad_(True)
                f = encoder._attention_branch(owners[0], x2, mask)
                grads = torch.autograd.grad(
                    f, [x2, *parameters], dy1, allow_unused=True
                )
            x1 = (y1 - f).detach()
            dy2 = dy2 + grads[0]
            totals = _add(totals, grads[1:])
            y1, y2 = x1, x2.detach()
        return (None, None, None, dy1 + dy2, *totals)


def _add(totals, grads):
    return [
        total if grad is None else (grad if total is None else total + grad)
        for total, grad in zip(totals, grads)
    ]
