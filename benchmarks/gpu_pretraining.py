"""Pretraining throughput on an accelerator: keras_albert on JAX beside
keras-hub on JAX and Hugging Face on PyTorch, in one run.

    KERAS_BACKEND=jax python benchmarks/gpu_pretraining.py \
        [--shapes tiny,base] [--rounds 3] [--steps 50] [--precision bf16] \
        [--output benchmarks/results/gpu_pretraining.json]

Every side trains on the same batches, made by the real input pipeline:
pretraining instances (n-gram masking, SOP) created from the bundled Austen
novels with the bundled `albert_tiny_en` vocabulary, written as NumPy
shards and read by `PretrainingBatches` (`data/pretraining_arrays.py`), the
path `python -m keras_albert pretrain` takes on JAX; the input pipeline is
inside the timed steps. Tokens/s = batch x sequence length x steps / the
wall time of `--steps` steps after a warm-up that compiles.

- ours: `AlbertPretrainer` (MLM over the masked positions + SOP) on JAX,
  XLA as JAX always compiles, full attention through
  `ops.dot_product_attention` (cuDNN flash attention on NVIDIA GPUs).
- keras-hub: `AlbertMaskedLM` (MLM over the masked positions, no SOP head)
  on JAX, same shape, same batches.
- Hugging Face: `AlbertForPreTraining` on PyTorch (MLM logits on every
  position, as it computes them, + SOP), bf16 autocast on CUDA, eager and,
  with `--hf_compile` (default on CUDA), `torch.compile`d: its faster figure
  counts.

All use AdamW (lr 1e-4) so the optimizer costs the same; `--precision bf16`
is Keras's `mixed_bfloat16` for the two Keras sides. Shapes: `tiny` is
`albert_tiny_en` (4 layers, H 256, E 128, 4 heads, FFN 1024), batch 512;
`base` is ALBERT-base (12 layers, H 768, E 128, 12 heads, FFN 3072,
vocabulary 30,000), batch 256; sequence length 128 and 20 predictions.
Writes date, machine, device, library versions, batch, precision and
tokens/s per round (median and spread) to the result JSON.

On a CPU it runs too (`--shapes tiny --batch 8 --steps 3 --rounds 1`
checks the script in a minute); only accelerator figures are quoted.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from recording import check_rounds  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402

SHAPES = {
    "tiny": dict(vocabulary_size=8000, num_layers=4, num_heads=4, embedding_dim=128,
                 hidden_dim=256, intermediate_dim=1024, batch=512),
    "base": dict(vocabulary_size=30000, num_layers=12, num_heads=12, embedding_dim=128,
                 hidden_dim=768, intermediate_dim=3072, batch=256),
}
SEQUENCE_LENGTH = 128
PREDICTIONS = 20


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="tiny,base")
    parser.add_argument("--batch", type=int, default=None, help="override every shape's batch")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--precision", choices=("bf16", "float32"), default="bf16")
    parser.add_argument("--sides", default="ours,keras_hub,hf")
    parser.add_argument("--instances", type=int, default=4096)
    parser.add_argument("--hf_compile", choices=("auto", "yes", "no"), default="auto")
    parser.add_argument("--output", default="gpu_pretraining.json")
    args = parser.parse_args(argv)
    sides = args.sides.split(",")
    if set(sides) - {"ours", "keras_hub", "hf"}:
        parser.error(f"--sides: pick from ours,keras_hub,hf. Received: {args.sides}")
    return args, checked_shapes_on_jax(parser, args.shapes), sides


def checked_shapes_on_jax(parser, shapes_argument):
    """The names in --shapes; a usage error for an unknown one, or when this
    process's backend is not JAX."""
    shapes = shapes_argument.split(",")
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        parser.error(f"--shapes: unknown {unknown}; known: {sorted(SHAPES)}")
    if keras.config.backend() != "jax":
        parser.error(f"run with KERAS_BACKEND=jax (this process: {keras.config.backend()})")
    return shapes


def pretraining_arrays(count, seed=0):
    """Instances from the bundled novels, through the NumPy record files."""
    from keras_albert.data.pretraining_arrays import read_pretraining_arrays
    from keras_albert.data.pretraining_arrays import write_pretraining_arrays
    from keras_albert.data.pretraining_instances import create_pretraining_instances
    from keras_albert.datasets.austen import load_austen_documents
    from keras_albert.presets.preset_resolution import resolve_preset

    proto = open(os.path.join(resolve_preset("albert_tiny_en"), "assets", "tokenizer",
                              "vocabulary.spm"), "rb").read()
    # Five novels (Persuasion stays held out), cut into documents of 200
    # sentences so that instances come from all of them.
    documents = []
    for novel in load_austen_documents(sentences=True):
        documents += [novel[i:i + 200] for i in range(0, len(novel), 200)]
    instances = []
    for instance in create_pretraining_instances(
        documents, proto, max_seq_length=SEQUENCE_LENGTH,
        max_predictions_per_seq=PREDICTIONS, seed=seed,
    ):
        instances.append(instance)
        if len(instances) == count:
            break
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "train.npz")
        write_pretraining_arrays(instances, path)
        return read_pretraining_arrays(path)


def batch_stream(arrays, batch, seed=0):
    from keras_albert.data.pretraining_batches import PretrainingBatches

    return PretrainingBatches(arrays, batch, seed=seed).generator()


def keras_rounds(model, stream, steps, rounds):
    """Seconds per round of `steps` steps, after one compiling round."""
    fit = lambda count: keras.Model.fit(model, stream, steps_per_epoch=count, epochs=1, verbose=0, shuffle=False)  # noqa: E731
    fit(max(2, steps // 10))
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        history = fit(steps)
        float(history.history["loss"][-1])  # the device has finished
        seconds.append(time.perf_counter() - start)
    return seconds


def ours_model(shape):
    """Our `AlbertPretrainer` (MLM + SOP) of `shape`, compiled as timed."""
    import keras_albert

    config = {k: v for k, v in shape.items() if k != "batch"}
    backbone = keras_albert.AlbertBackbone(**config, max_sequence_length=SEQUENCE_LENGTH)
    model = keras_albert.AlbertPretrainer(backbone)
    model.compile(optimizer=keras.optimizers.AdamW(1e-4), jit_compile=True)
    return model


def keras_hub_model(shape):
    """keras-hub's `AlbertMaskedLM` of `shape` (one shared group, as ours),
    compiled as timed; it takes `mlm_only` batches."""
    import keras_hub

    config = {k: v for k, v in shape.items() if k != "batch"}
    backbone = keras_hub.models.AlbertBackbone(
        **config, num_groups=1, num_inner_repetitions=1, dropout=0.0,
        max_sequence_length=SEQUENCE_LENGTH,
    )
    model = keras_hub.models.AlbertMaskedLM(backbone, preprocessor=None)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    return model


def mlm_only(stream):
    """A pretraining batch stream as keras-hub's masked LM takes it."""
    for x, y, weights in stream:
        yield x, y["mlm"], weights["mlm"]


def ours(shape, arrays, args):
    return keras_rounds(ours_model(shape), batch_stream(arrays, args.batch_size), args.steps, args.rounds)


def keras_hub_side(shape, arrays, args):
    return keras_rounds(keras_hub_model(shape), mlm_only(batch_stream(arrays, args.batch_size)),
                        args.steps, args.rounds)


def hugging_face(shape, arrays, args):
    import torch
    import transformers

    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = transformers.AlbertConfig(
        vocab_size=shape["vocabulary_size"], embedding_size=shape["embedding_dim"],
        hidden_size=shape["hidden_dim"], num_hidden_layers=shape["num_layers"],
        num_attention_heads=shape["num_heads"], intermediate_size=shape["intermediate_dim"],
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        max_position_embeddings=SEQUENCE_LENGTH, hidden_act="gelu_new",
    )
    model = transformers.AlbertForPreTraining(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    autocast = args.precision == "bf16" and device == "cuda"
    compile_modes = {"auto": [False, True] if device == "cuda" else [False],
                     "yes": [False, True], "no": [False]}[args.hf_compile]
    stream = batch_stream(arrays, args.batch_size)

    def to_torch(batch):
        x, y, _ = batch
        labels = np.full(x["token_ids"].shape, -100, np.int64)
        rows = np.arange(len(labels))[:, None]
        weights = batch[2]["mlm"] > 0
        labels[rows.repeat(PREDICTIONS, 1)[weights], x["mask_positions"][weights]] = y["mlm"][weights]
        return dict(
            input_ids=torch.as_tensor(x["token_ids"], dtype=torch.long, device=device),
            token_type_ids=torch.as_tensor(x["segment_ids"], dtype=torch.long, device=device),
            attention_mask=torch.as_tensor(x["padding_mask"], dtype=torch.long, device=device),
            labels=torch.as_tensor(labels, device=device),
            sentence_order_label=torch.as_tensor(y["sentence_order"], dtype=torch.long, device=device),
        )

    results = {}
    for compiled in compile_modes:
        run = torch.compile(model) if compiled else model

        def step():
            inputs = to_torch(next(stream))
            with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
                loss = run(**inputs).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss

        for _ in range(max(2, args.steps // 10)):
            step()
        seconds = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _ in range(args.steps):
                loss = step()
            float(loss.detach())  # the device has finished
            seconds.append(time.perf_counter() - start)
        results["torch.compile" if compiled else "eager"] = seconds
    best = min(results, key=lambda name: statistics.median(results[name]))
    return results[best], {"hf_setting": best, "hf_settings_measured": {
        name: spread(values) for name, values in results.items()}}


def versions():
    found = {}
    for name in ("keras", "keras_hub", "jax", "torch", "transformers", "numpy"):
        try:
            module = __import__(name)
            found[name] = getattr(module, "__version__", "unknown")
        except ImportError:
            found[name] = None
    import keras_albert

    found["keras_albert"] = keras_albert.__version__
    return found


def device():
    import jax

    first = jax.devices()[0]
    return {"platform": first.platform, "kind": first.device_kind, "count": jax.device_count()}


def main(argv=None):
    args, shapes, sides = parse(argv)
    check_rounds(args.rounds)
    if args.precision == "bf16":
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    print(f"device: {device()}", flush=True)
    arrays = pretraining_arrays(args.instances)
    rows = {}
    for name in shapes:
        shape = SHAPES[name]
        args.batch_size = args.batch or shape["batch"]
        tokens = args.batch_size * SEQUENCE_LENGTH * args.steps
        row = {"batch": args.batch_size, "sequence_length": SEQUENCE_LENGTH, "steps": args.steps}
        for side in sides:
            extra = {}
            if side == "ours":
                seconds = ours(shape, arrays, args)
            elif side == "keras_hub":
                seconds = keras_hub_side(shape, arrays, args)
            else:
                seconds, extra = hugging_face(shape, arrays, args)
            row[side] = {"tokens_per_second": spread([tokens / s for s in seconds]), **extra}
            print(f"{name} {side}: {row[side]['tokens_per_second']['median']:,.0f} tokens/s", flush=True)
        for peer in ("keras_hub", "hf"):
            if "ours" in row and peer in row:
                row[f"ours_over_{peer}"] = (
                    row["ours"]["tokens_per_second"]["median"] / row[peer]["tokens_per_second"]["median"]
                )
        rows[name] = row
        # Written after every shape, so that a run cut short by its time
        # limit still returns the shapes it finished.
        write_result(args.output, {
            "device": device(), "versions": versions(), "precision": args.precision,
            "optimizer": "AdamW(1e-4) on every side", "rounds": args.rounds, "shapes": rows,
        }, argv=None if argv is None else ["benchmarks/gpu_pretraining.py", *argv])


if __name__ == "__main__":
    main()
