"""What one pretraining step costs as XLA compiles it: ours beside keras-hub.

    KERAS_BACKEND=jax python benchmarks/step_cost.py [--shapes tiny,base] \
        [--batch 64] [--precision bf16] [--output step_cost.json]

The models are `benchmarks/gpu_pretraining.py`'s (ours: `AlbertPretrainer`,
MLM over the masked positions + SOP; keras-hub: `AlbertMaskedLM`, MLM only),
fed the same batch of the real input pipeline. For each, the loss and its
gradients with respect to every trainable weight (Keras's own
`compute_loss_and_updates` under `jax.value_and_grad`, as `fit` runs it;
the AdamW update, the same on both sides, is left out) are compiled with
`jax.jit` on this machine's first device, and XLA's cost analysis gives the
floating-point operations and the bytes the program reads and writes, with
the number of fused kernels in the optimised program.

Why: a step-time ratio tells how two programs ran, not why. Equal flops and
bytes mean the arithmetic is the same, so a speed-up must come from
kernels (cuDNN attention) or host overhead, not from the model's maths.
On a CPU the figures are XLA-CPU's fusion decisions; run it on the
accelerator to read that compiler's.
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
from gpu_pretraining import SHAPES  # noqa: E402
from gpu_pretraining import batch_stream  # noqa: E402
from gpu_pretraining import checked_shapes_on_jax  # noqa: E402
from gpu_pretraining import device  # noqa: E402
from gpu_pretraining import keras_hub_model  # noqa: E402
from gpu_pretraining import mlm_only  # noqa: E402
from gpu_pretraining import ours_model  # noqa: E402
from gpu_pretraining import pretraining_arrays  # noqa: E402
from recording import write_result  # noqa: E402


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="tiny,base")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--precision", choices=("bf16", "float32"), default="bf16")
    parser.add_argument("--output", default="step_cost.json")
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error(f"--batch must be a positive integer; got {args.batch}")
    return args, checked_shapes_on_jax(parser, args.shapes)


def gradient_step_cost(model, x, y, sample_weight):
    """flops, bytes accessed and fused kernels of the loss-and-gradients
    program `fit` runs for `model` on one batch."""
    import jax

    # One real step builds the optimizer (its variables feed loss scaling).
    batch = len(next(iter(x.values())))
    model.fit(x, y, sample_weight=sample_weight, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    values = lambda variables: [v.value for v in variables]  # noqa: E731
    metrics, optimizer = values(model.metrics_variables), values(model.optimizer.variables)

    def loss(trainable, non_trainable, x, y, sample_weight):
        return model.compute_loss_and_updates(
            trainable, non_trainable, metrics, x, y, sample_weight,
            training=True, optimizer_variables=optimizer,
        )[0]

    compiled = jax.jit(jax.value_and_grad(loss)).lower(
        values(model.trainable_variables), values(model.non_trainable_variables), x, y, sample_weight,
    ).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return {
        "gflops": round(float(cost.get("flops", 0.0)) / 1e9, 3),
        "bytes_accessed_mb": round(float(cost.get("bytes accessed", 0.0)) / 1e6, 1),
        "fusions": compiled.as_text().count(" fusion("),
        "parameters": int(model.count_params()),
    }


def main(argv=None):
    args, shapes = parse(argv)
    if args.precision == "bf16":
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    arrays = pretraining_arrays(max(256, 2 * args.batch))
    rows = {}
    for name in shapes:
        x, y, weights = next(batch_stream(arrays, args.batch))
        ours = gradient_step_cost(ours_model(SHAPES[name]), x, y, weights)
        hub = gradient_step_cost(keras_hub_model(SHAPES[name]), *next(mlm_only([(x, y, weights)])))
        rows[name] = {
            "ours": ours, "keras_hub": hub,
            "ours_over_keras_hub": {
                key: round(ours[key] / hub[key], 4) for key in ("gflops", "bytes_accessed_mb", "fusions")
            },
        }
        print(f"{name}: ours {ours}, keras-hub {hub}", flush=True)
    write_result(args.output, {
        "device": device(), "precision": args.precision, "batch": args.batch,
        "program": "loss and gradients of every trainable weight (no optimizer update)",
        "shapes": rows,
    }, argv=None if argv is None else ["benchmarks/step_cost.py", *argv])


if __name__ == "__main__":
    main()
