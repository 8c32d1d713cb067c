"""Mean and spread over seeds of `causal_quality.py` runs (issue 37 item 4).

    python benchmarks/causal_quality_seeds.py \\
        benchmarks/results/causal_quality.json runs/causal_quality_seed1.json \\
        runs/causal_quality_seed2.json --output benchmarks/results/causal_quality_seeds.json

Each input is one `causal_quality.py` record of one seed: its `--preset`
trained with that seed (`pretrain --seed`) and its GPT-2 trained here with
`--seed`. The runs must have scored the same things (the same held-out
windows and cloze passages, by their fingerprints) with the same settings
but the preset, the seed and the output; they must differ in seed. The
n-gram model depends on the seed only through the carve-out its discount
is chosen on. Written per model: perplexity and cloze accuracy as mean and
sample standard deviation over the runs, and each run's figures; and the
preset's paired differences from each other model (seed by seed, since a
seed's runs share their batches), as mean and sd.

causal_quality.py stays the tool for one run: it trains GPT-2 and scores
three models in one process, minutes on a GPU; this one only reads.
"""

import argparse
import json
import pathlib
import sys

from recording import mean_sd
from recording import write_result

# Settings that may differ between the seeds' runs.
PER_RUN = {"preset", "seed", "gpt2_output", "gpt2_preset"}
MODELS = ("albert", "gpt2", "kneser_ney")


def read_run(path):
    try:
        record = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable JSON record ({error})") from None
    if not isinstance(record, dict) or "models" not in record or "settings" not in record:
        raise ValueError(f"{path}: not a causal_quality.py record (no `models` or `settings`)")
    return record


def check_comparable(paths, runs):
    first = runs[0]
    for path, run in zip(paths[1:], runs[1:]):
        for part in ("perplexity_eval", "cloze"):
            for key in ("windows_sha256_16", "passages_sha256_16"):
                if first[part].get(key) != run[part].get(key):
                    raise ValueError(f"{path} scored other {part} than {paths[0]} ({key} differs)")
        shared = {k: v for k, v in first["settings"].items() if k not in PER_RUN}
        other = {k: v for k, v in run["settings"].items() if k not in PER_RUN}
        different = sorted(k for k in shared.keys() | other.keys() if shared.get(k) != other.get(k))
        if different:
            raise ValueError(f"{path} differs from {paths[0]} in settings {different}: only "
                             f"{sorted(PER_RUN)} may differ between seeds")
    seeds = [run["settings"]["seed"] for run in runs]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"the runs must have different seeds; got {seeds}")
    return seeds


def summarize(runs, seeds):
    models = {}
    for name in MODELS:
        rows = [run["models"].get(name) for run in runs]
        if all(row is None for row in rows):
            continue
        if any(row is None for row in rows):
            raise ValueError(f"only some runs scored {name}: every seed must score the same models")
        models[name] = {
            "perplexity": mean_sd([row["perplexity"] for row in rows], count_key="n"),
            "cloze_accuracy": mean_sd([row["cloze"]["accuracy"] for row in rows], count_key="n"),
            "runs": [{"seed": seed, "perplexity": row["perplexity"], "cloze_accuracy": row["cloze"]["accuracy"],
                      **({"discount": row["discount"]} if "discount" in row else {}),
                      "preset": row.get("preset") or row.get("training", {}).get("preset")}
                     for seed, row in zip(seeds, rows)],
        }
    return models


def paired_differences(models):
    """The preset minus each other model, per seed: perplexity, and cloze
    accuracy in points."""
    if "albert" not in models:
        return {}
    ours = models["albert"]["runs"]
    differences = {}
    for name in MODELS[1:]:
        if name not in models:
            continue
        theirs = models[name]["runs"]
        differences[f"albert_minus_{name}"] = {
            "perplexity": mean_sd([a["perplexity"] - b["perplexity"] for a, b in zip(ours, theirs)], count_key="n"),
            "cloze_points": mean_sd([100 * (a["cloze_accuracy"] - b["cloze_accuracy"]) for a, b in zip(ours, theirs)],
                                    count_key="n"),
        }
    return differences


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="causal_quality.py records, one per seed")
    parser.add_argument("--output", default="causal_quality_seeds.json")
    args = parser.parse_args(argv)
    if len(args.runs) < 2:
        parser.error(f"give two or more runs (one per seed); got {len(args.runs)}")
    try:
        runs = [read_run(path) for path in args.runs]
        seeds = check_comparable(args.runs, runs)
        models = summarize(runs, seeds)
    except ValueError as error:
        parser.exit(2, f"error: {error}\n")
    write_result(args.output, {"seeds": seeds, "inputs": args.runs, "perplexity_eval": runs[0]["perplexity_eval"],
                               "cloze_passages": runs[0]["cloze"]["passages"], "models": models,
                               "paired_differences": paired_differences(models)})
    for name, row in models.items():
        if row["perplexity"]["sd"] is not None:
            print(f"{name:>10}: perplexity {row['perplexity']['mean']:.2f} +- {row['perplexity']['sd']:.2f}, "
                  f"cloze {row['cloze_accuracy']['mean']:.3f} +- {row['cloze_accuracy']['sd']:.3f} "
                  f"over seeds {seeds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
