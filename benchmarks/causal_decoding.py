"""Decoding speed of AlbertCausalLM with and without its key/value cache,
beside keras-hub's GPT2CausalLM of the same shape, in one run (issue 37).

    python benchmarks/causal_decoding.py                      # CPU-sized
    python benchmarks/causal_decoding.py --new_tokens 256 --num_layers 12 \\
        --hidden_dim 768 --num_heads 12 --intermediate_dim 3072 --vocabulary_size 50257
    KERAS_BACKEND=jax python benchmarks/causal_decoding.py --output causal_decoding_jax.json

Every model decodes `--new_tokens` tokens greedily after a
`--prompt_length` prompt (batch `--batch_size`, no stop token), with random
weights (speed does not depend on them). Rows:

- `albert_shared`: ALBERT's layout, every layer running one shared block,
  factorized embedding (`--embedding_dim`), with the cache and without it
  (the whole window recomputed per token);
- `albert_gpt2_layout`: nothing shared, E = H, pre-LN (a converted GPT-2's
  layout), with the cache;
- `keras_hub_gpt2`: keras-hub's GPT2CausalLM of the same depth, width,
  heads, feed-forward width, vocabulary and positions (its own cache).

All run through keras-hub's `CausalLM.generate` on the same backend, each
compiled by a first untimed call (`--jit_compile` sets XLA for all); the
timed calls are `--rounds` rounds, interleaving the models.
Writes benchmarks/results/causal_decoding.json (`--output`) with the
command, date, machine, threads and versions (benchmarks/recording.py).
"""

import argparse
import time

from recording import check_rounds
from recording import show
from recording import spread
from recording import write_result


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--new_tokens", type=int, default=256)
    parser.add_argument("--prompt_length", type=int, default=16)
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--num_layers", type=int, default=4)
    parser.add_argument("--hidden_dim", type=int, default=256)
    parser.add_argument("--embedding_dim", type=int, default=128, help="ALBERT's E for albert_shared")
    parser.add_argument("--num_heads", type=int, default=4)
    parser.add_argument("--intermediate_dim", type=int, default=1024)
    parser.add_argument("--vocabulary_size", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jit_compile", choices=("default", "true", "false"), default="default",
                        help="XLA for every model's generate (default: each model's own default)")
    parser.add_argument("--output", default="causal_decoding.json")
    args = parser.parse_args(argv)
    check_rounds(args.rounds)
    for name in ("new_tokens", "prompt_length", "batch_size", "num_layers", "hidden_dim",
                 "embedding_dim", "num_heads", "intermediate_dim", "vocabulary_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a positive integer; got {getattr(args, name)}")
    return args


def build_models(args, max_length):
    import keras_hub

    import keras_albert

    shape = dict(
        vocabulary_size=args.vocabulary_size, num_layers=args.num_layers, num_heads=args.num_heads,
        hidden_dim=args.hidden_dim, intermediate_dim=args.intermediate_dim,
        max_sequence_length=max_length,
    )
    shared = keras_albert.AlbertBackbone(
        **shape, embedding_dim=args.embedding_dim, num_groups=1, sharing="all", causal=True)
    gpt2_layout = keras_albert.AlbertBackbone(
        **shape, embedding_dim=args.hidden_dim, num_groups=args.num_layers, sharing="none",
        num_segments=1, layer_norm_epsilon=1e-5, causal=True, normalize_first=True)
    keras_hub_gpt2 = keras_hub.models.GPT2Backbone(
        vocabulary_size=args.vocabulary_size, num_layers=args.num_layers, num_heads=args.num_heads,
        hidden_dim=args.hidden_dim, intermediate_dim=args.intermediate_dim,
        max_sequence_length=max_length)
    return {
        "albert_shared": keras_albert.AlbertCausalLM(shared),
        "albert_gpt2_layout": keras_albert.AlbertCausalLM(gpt2_layout),
        "keras_hub_gpt2": keras_hub.models.GPT2CausalLM(keras_hub_gpt2),
    }


def timed_generation(model, inputs, **generate_kwargs):
    """(seconds, token ids) of one `generate` call."""
    start = time.perf_counter()
    tokens = model.generate(inputs, stop_token_ids=None, **generate_kwargs)["token_ids"]
    return time.perf_counter() - start, tokens


def main(argv=None):
    args = parse_args(argv)
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    max_length = args.prompt_length + args.new_tokens
    models = build_models(args, max_length)
    token_ids = np.zeros((args.batch_size, max_length), "int32")
    padding_mask = np.zeros((args.batch_size, max_length), "int32")
    token_ids[:, : args.prompt_length] = np.random.default_rng(0).integers(
        1, args.vocabulary_size, (args.batch_size, args.prompt_length))
    padding_mask[:, : args.prompt_length] = 1
    inputs = {"token_ids": token_ids, "padding_mask": padding_mask}

    runs = [("albert_shared", "cached", {"use_cache": True}),
            ("albert_shared", "uncached", {"use_cache": False}),
            ("albert_gpt2_layout", "cached", {"use_cache": True}),
            ("keras_hub_gpt2", "cached", {})]
    first, seconds, tokens = {}, {}, {}
    compile_kwargs = {} if args.jit_compile == "default" else {"jit_compile": args.jit_compile == "true"}
    # Once per model: compiling again drops the generate functions traced
    # so far, and the first timed round would trace them anew.
    for model in models.values():
        model.compile(sampler="greedy", **compile_kwargs)
    for name, mode, kwargs in runs:
        # Each traced by its own untimed first call.
        first[(name, mode)], tokens[(name, mode)] = timed_generation(models[name], inputs, **kwargs)
        seconds[(name, mode)] = []
    # Rounds interleave the models, so a busy machine slows them alike.
    for _ in range(args.rounds):
        for name, mode, kwargs in runs:
            elapsed, _ = timed_generation(models[name], inputs, **kwargs)
            seconds[(name, mode)].append(elapsed)
    rows = {}
    for name, mode, _ in runs:
        model, timings = models[name], seconds[(name, mode)]
        rows[f"{name}_{mode}"] = {
            "parameters": int(model.count_params()),
            "jit_compile": str(getattr(model, "jit_compile", None)),
            "first_call_s": round(first[(name, mode)], 3),
            "seconds": spread(timings),
            "new_tokens_per_s": round(args.batch_size * args.new_tokens / float(np.median(timings)), 1),
        }
        print(f"{name:>20} {mode:>8}: {show(timings, 1000)} ms per {args.new_tokens} tokens "
              f"(first call {first[(name, mode)]:.1f} s)", flush=True)
    same_tokens = bool(np.array_equal(tokens[("albert_shared", "cached")], tokens[("albert_shared", "uncached")]))

    def median(row):
        return rows[row]["seconds"]["median"]

    ratios = {
        "uncached_over_cached_albert_shared": round(median("albert_shared_uncached") / median("albert_shared_cached"), 2),
        "albert_shared_cached_over_keras_hub_gpt2": round(median("albert_shared_cached") / median("keras_hub_gpt2_cached"), 2),
        "albert_gpt2_layout_cached_over_keras_hub_gpt2": round(median("albert_gpt2_layout_cached") / median("keras_hub_gpt2_cached"), 2),
    }
    for name, value in ratios.items():
        print(f"{name}: {value}")
    print(f"cached and uncached tokens equal: {same_tokens}")
    write_result(args.output, {
        "backend": keras.config.backend(),
        "settings": {key: value for key, value in vars(args).items() if key != "output"},
        "rows": rows,
        "ratios": ratios,
        "cached_equals_uncached_tokens": same_tokens,
    })


if __name__ == "__main__":
    main()
