"""Prepares a GPU pretraining run: what travels, checked before any GPU time.

Run here (on the CPU), then give the printed command to the device tool.
A run starts in one of two ways:

  from a model config (new weights; the vocabulary is --preset's
  SentencePiece model, so the corpus is tokenized once with it):

    python tools/prepare_gpu_pretraining.py --corpus runs/corpus_v2 \\
        --config tools/configs/albert_small_en.json --name albert_small_en_v1 \\
        --train_steps 6000 --checkpoint_every 500 --expected_tokens_per_second 1100000

  continuing a preset (a bundled name, a preset directory in the tree, or
  the folder a previous run's archive was unpacked to, tools/progress/NAME,
  whose preset/ is used):

    python tools/prepare_gpu_pretraining.py --corpus runs/corpus_v2 \\
        --preset tools/progress/albert_small_en_v1 --name albert_small_en_v2 ...

`--objective causal_lm` trains next-token prediction (an AlbertCausalLM
preset) on the same tokenized corpus; `pretrain` packs it into windows on
the device.

Each device machine starts bare, so a run continues from what travels: a
committed progress preset (its weights; the optimizer state and the
learning-rate schedule start again) — a checkpoint with its optimizer state
is three times the weights and does not fit the upload beside the tree.
On a machine still warm from the same command, running it again resumes
from the run's own checkpoints (`pretrain` resumes its --output).

It writes `.gpu/` (ignored by git; carried to the device by name):
  corpus/train.npz, corpus/eval.npz   the corpus and the held-out Persuasion,
                                      tokenized with --preset's vocabulary
                                      (`keras_albert.data.tokenized_corpus`)
  vocabulary.spm                      that vocabulary (a run from a config
                                      starts with it)
  config.json                         the checked model config (from a config)
  plan.json                           what was planned and from what; packed
                                      with the results
  wheels/                             keras and keras-hub (and what they need
                                      that the device's image lacks), for
                                      Python 3.12 on x86-64
  command.sh                          the command the device runs
                                      (`tools/gpu_pretraining_run.sh` with
                                      this run's settings)

and refuses, saying by how much or naming what is wrong, before any GPU
time: an upload (the tree as the device receives it plus `.gpu/`) over the
device's 64 MiB, steps that would not fit the time budget at the expected
throughput (`benchmarks/gpu_pretraining.py` measures it), a config that is
not JSON or names arguments AlbertBackbone does not take, and a preset
that would not travel. The device run stops at its last checkpoint inside
`--time_budget_minutes` anyway; these checks keep a run from being planned
to do what it cannot.
"""

import argparse
import inspect
import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
UPLOAD_LIMIT = 64 * 2**20
# Where a run's archive is unpacked and committed (a progress record).
PROGRESS = ROOT / "tools" / "progress"
OBJECTIVES = ("mlm", "causal_lm")
# Installed on the device image (KINDS.md) and not carried: jax, numpy,
# h5py, absl-py, rich, ml-dtypes, packaging, regex, sentencepiece, pyyaml,
# requests, tqdm, tokenizers. Carried: what keras and keras-hub need beyond
# them; not kagglehub, which keras-hub does without (no downloads there).
# grain (and what it needs beyond the image): keras-hub batches in-memory
# inputs through it where TensorFlow is missing (the GPU test run of
# 2026-11-27 failed 10 tests without it).
WHEELS = ("keras==3.15.1", "keras-hub==0.32.0", "namex", "optree", "grain==0.2.18",
          "array-record==0.8.6", "portpicker")
# Compiling, creating instances and writing the preset, beside the steps.
OVERHEAD_SECONDS = 150


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="a directory of .txt training files (persuasion.txt is the held-out set)")
    parser.add_argument("--preset", default="albert_tiny_en",
                        help="the vocabulary, and without --config the weights to continue: a bundled name, a "
                             "preset directory inside the tree, or a previous run's folder holding preset/")
    parser.add_argument("--config", default=None,
                        help="start from new weights: a JSON file of AlbertBackbone arguments (tools/configs/)")
    parser.add_argument("--objective", default="mlm", choices=OBJECTIVES)
    parser.add_argument("--name", required=True,
                        help="the run's name, new: its folder on the device and tools/progress/NAME here")
    parser.add_argument("--output", default=str(ROOT / ".gpu"))
    parser.add_argument("--train_steps", type=int, required=True)
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--dupe_factor", type=int, default=5, help="masked LM only")
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--checkpoint_every", type=int, default=1000)
    parser.add_argument("--time_budget_minutes", type=float, default=9.0)
    parser.add_argument("--expected_tokens_per_second", type=float, required=True)
    parser.add_argument("--skip_wheels", action="store_true", help="reuse .gpu/wheels as it is")
    args = parser.parse_args(argv)
    if args.train_steps % args.checkpoint_every:
        parser.error(f"--checkpoint_every={args.checkpoint_every} must divide --train_steps={args.train_steps}")
    if not args.name.replace("_", "").replace("-", "").replace(".", "").isalnum():
        parser.error(f"--name {args.name!r}: letters, digits, '_', '-' and '.' only (it names folders)")
    if (PROGRESS / args.name).exists():
        parser.error(f"--name {args.name!r}: {PROGRESS / args.name} holds an earlier run's record; "
                     "its results would be unpacked over it. Pick a new name.")
    return args


def check_time(args):
    """Seconds the run needs at the expected throughput; refuses overruns."""
    tokens = args.train_steps * args.batch_size * args.max_seq_length
    seconds = tokens / args.expected_tokens_per_second + OVERHEAD_SECONDS
    budget = args.time_budget_minutes * 60
    if seconds > budget:
        fits = int((budget - OVERHEAD_SECONDS) * args.expected_tokens_per_second
                   / (args.batch_size * args.max_seq_length)) // args.checkpoint_every * args.checkpoint_every
        raise SystemExit(
            f"error: {args.train_steps:,} steps of {args.batch_size} x {args.max_seq_length} tokens need about "
            f"{seconds / 60:.1f} minutes at {args.expected_tokens_per_second:,.0f} tokens/s (with "
            f"{OVERHEAD_SECONDS} s to start and save), {(seconds - budget) / 60:.1f} over the "
            f"{args.time_budget_minutes:g}-minute budget: use --train_steps {max(fits, 0):,} or fewer."
        )
    return seconds


def travelling_files():
    """The files the device receives of the tree: tracked ones and the
    untracked ones git does not ignore (the device tool copies both)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    return {(ROOT / name).resolve() for name in listed.decode().split("\0") if name and (ROOT / name).is_file()}


def upload_bytes(output):
    """(tree, carried) bytes: the tree as it travels and the `.gpu/` folder
    carried beside it, each file counted once."""
    tree = travelling_files()
    carried = {path.resolve() for path in pathlib.Path(output).rglob("*") if path.is_file()} - tree
    return sum(p.stat().st_size for p in tree), sum(p.stat().st_size for p in carried)


def resolve_start(args):
    """(preset directory, its name in the command) for the vocabulary and,
    when continuing, the weights. A preset that is not bundled must lie in
    the tree and travel with it (not ignored by git)."""
    from keras_albert.presets.preset_resolution import bundled_presets
    from keras_albert.presets.preset_resolution import resolve_preset

    if args.preset in bundled_presets():
        return pathlib.Path(resolve_preset(args.preset)), args.preset
    folder = pathlib.Path(args.preset)
    if (folder / "preset" / "config.json").is_file():
        folder = folder / "preset"  # a previous run's unpacked archive
    if not (folder / "config.json").is_file():
        raise SystemExit(
            f"error: --preset {args.preset!r} is neither a bundled preset ({sorted(bundled_presets())}) nor a "
            "directory holding a preset (config.json) or a previous run's preset/."
        )
    folder = folder.resolve()
    if not folder.is_relative_to(ROOT):
        raise SystemExit(
            f"error: --preset {args.preset!r} lies outside the repository {str(ROOT)!r}: only the tree "
            "travels to the device. Copy it under tools/progress/ first."
        )
    ignored = subprocess.run(["git", "check-ignore", "-q", str(folder / "config.json")], cwd=ROOT).returncode == 0
    if ignored:
        raise SystemExit(
            f"error: --preset {args.preset!r} is ignored by git, so it would not travel to the device. "
            "Copy it under tools/progress/ first."
        )
    return folder, os.path.relpath(folder, ROOT)


def backbone_arguments():
    """The arguments AlbertBackbone takes by name."""
    from keras_albert.models.albert_backbone import AlbertBackbone

    parameters = inspect.signature(AlbertBackbone.__init__).parameters.values()
    return {p.name for p in parameters if p.name != "self" and p.kind is not p.VAR_KEYWORD}


def read_config(args, vocabulary_size):
    """The checked --config: JSON, known arguments only, the vocabulary of
    --preset, enough positions; built once here, so bad values fail now.
    Returns (config, backbone parameters)."""
    path = pathlib.Path(args.config)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SystemExit(f"error: --config {args.config!r} cannot be read: {error.strerror}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SystemExit(f"error: --config {args.config!r} is not valid JSON: {error}.") from None
    if not isinstance(config, dict):
        raise SystemExit(f"error: --config {args.config!r} must hold a JSON object of AlbertBackbone "
                         f"arguments, not a {type(config).__name__}.")
    known = backbone_arguments()
    unknown = sorted(set(config) - known)
    if unknown:
        raise SystemExit(f"error: --config {args.config!r} names arguments AlbertBackbone does not take: "
                         f"{', '.join(unknown)} (it takes {', '.join(sorted(known))}).")
    if config.get("vocabulary_size", vocabulary_size) != vocabulary_size:
        raise SystemExit(
            f"error: --config {args.config!r} sets vocabulary_size={config['vocabulary_size']!r}, but the corpus "
            f"is tokenized with the {vocabulary_size:,}-piece vocabulary of --preset {args.preset!r}: leave "
            "vocabulary_size out (it is taken from the vocabulary)."
        )
    if config.get("max_sequence_length", args.max_seq_length) < args.max_seq_length:
        raise SystemExit(f"error: --config {args.config!r} sets max_sequence_length={config['max_sequence_length']}, "
                         f"shorter than --max_seq_length {args.max_seq_length}.")
    causal = config.get("causal", False)
    if causal and args.objective == "mlm":
        raise SystemExit(f"error: --config {args.config!r} sets causal=true, which a masked LM cannot use (it "
                         "reads both directions): pass --objective causal_lm or drop causal.")
    config = {**config, "vocabulary_size": vocabulary_size}
    config.setdefault("max_sequence_length", args.max_seq_length)
    if args.objective == "causal_lm":
        config["causal"] = True  # what `pretrain --objective=causal_lm` builds
    from keras_albert.models.albert_backbone import AlbertBackbone

    try:
        parameters = AlbertBackbone(**config).count_params()
    except (TypeError, ValueError) as error:
        raise SystemExit(f"error: --config {args.config!r}: {error}") from None
    return config, parameters


def tokenize(args, output, proto, size, lowercase):
    from keras_albert.data.documents import read_documents
    from keras_albert.data.pretraining_instances import tokenize_documents
    from keras_albert.data.tokenized_corpus import write_tokenized_corpus

    corpus = pathlib.Path(args.corpus)
    held_out = corpus / "persuasion.txt"
    training = sorted(path for path in corpus.glob("*.txt") if path != held_out)
    if not training or not held_out.is_file():
        raise SystemExit(f"error: --corpus {args.corpus!r} must hold .txt training files and persuasion.txt")
    (output / "corpus").mkdir(parents=True, exist_ok=True)
    for name, files in (("train", training), ("eval", [held_out])):
        documents, tokens = write_tokenized_corpus(
            tokenize_documents(read_documents([str(f) for f in files]), proto, lowercase=lowercase),
            output / "corpus" / f"{name}.npz", size,
        )
        print(f"{name}: {documents:,} documents, {tokens:,} tokens from {len(files)} file(s)", flush=True)


def download_wheels(output):
    wheels = output / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        "--python-version", "3.12", "--implementation", "cp",
        *[arg for tag in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
          for arg in ("--platform", tag)],
        "--platform", "any", "-d", str(wheels), *WHEELS,
    ]
    subprocess.run(command, check=True)


def write_command(args, output, start):
    """command.sh: one line of settings and the run script; `start` is the
    preset's name in the tree, or None for new weights of config.json."""
    begin = "FROM_CONFIG=1" if start is None else f"PRESET={start}"
    settings = (
        f"NAME={args.name} OBJECTIVE={args.objective} {begin} TRAIN_STEPS={args.train_steps} "
        f"BATCH_SIZE={args.batch_size} MAX_SEQ_LENGTH={args.max_seq_length} "
        + (f"DUPE_FACTOR={args.dupe_factor} " if args.objective == "mlm" else "")
        + f"LEARNING_RATE={args.learning_rate} CHECKPOINT_EVERY={args.checkpoint_every} "
        f"TIME_BUDGET_MINUTES={args.time_budget_minutes:g}"
    )
    (output / "command.sh").write_text(f"{settings} bash tools/gpu_pretraining_run.sh\n")
    return settings


def main(argv=None):
    args = parse(argv)
    seconds = check_time(args)
    folder, start = resolve_start(args)
    proto = (folder / "assets" / "tokenizer" / "vocabulary.spm").read_bytes()
    import sentencepiece

    vocabulary_size = sentencepiece.SentencePieceProcessor(model_proto=proto).get_piece_size()
    plan = {"name": args.name, "objective": args.objective, "vocabulary": start,
            "train_steps": args.train_steps, "batch_size": args.batch_size,
            "max_seq_length": args.max_seq_length, "learning_rate": args.learning_rate,
            "expected_tokens_per_second": args.expected_tokens_per_second,
            "expected_minutes": round(seconds / 60, 1), "time_budget_minutes": args.time_budget_minutes}
    if args.config:
        config, parameters = read_config(args, vocabulary_size)
        # A new run lowercases, as `pretrain` does without --init_preset.
        lowercase = True
        plan.update(start="new weights", config=config, backbone_parameters=parameters)
        print(f"new model from {args.config}: {parameters:,} backbone parameters, about "
              f"{parameters * 4 / 2**20:.1f} MiB of float32 weights", flush=True)
    else:
        from keras_albert.convert.converted_preset import preset_lowercase
        from keras_albert.presets.preset_kind import task_class_name

        if args.objective == "mlm" and task_class_name(folder) == "AlbertCausalLM":
            raise SystemExit(f"error: --preset {args.preset!r} is a causal LM; a masked-LM run continues a "
                             "bidirectional preset (or pass --objective causal_lm).")
        lowercase = preset_lowercase(folder)
        plan.update(start=start)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    tokenize(args, output, proto, vocabulary_size, lowercase)
    (output / "vocabulary.spm").write_bytes(proto)
    if args.config:
        (output / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    if not args.skip_wheels:
        download_wheels(output)
    settings = write_command(args, output, None if args.config else start)
    (output / "plan.json").write_text(json.dumps(plan, indent=2) + "\n")
    tree, carried = upload_bytes(output)
    if tree + carried > UPLOAD_LIMIT:
        raise SystemExit(
            f"error: the upload would be {(tree + carried) / 2**20:.1f} MiB (tree {tree / 2**20:.1f} + "
            f"{output.name} {carried / 2**20:.1f}), {(tree + carried - UPLOAD_LIMIT) / 2**20:.1f} MiB over the "
            "device's 64 MiB: drop corpus files or shrink the tree (untracked files count too)."
        )
    print(f"upload: {(tree + carried) / 2**20:.1f} MiB of 64; expected run: {seconds / 60:.1f} of "
          f"{args.time_budget_minutes:g} minutes", flush=True)
    print(f"device command (carry [\".gpu\"]): {settings} bash tools/gpu_pretraining_run.sh", flush=True)
    print(f"then, here: mkdir tools/progress/{args.name} && cat run.tgz.part-* | "
          f"tar -xzf - -C tools/progress/{args.name}", flush=True)


if __name__ == "__main__":
    main()
