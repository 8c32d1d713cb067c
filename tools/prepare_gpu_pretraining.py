"""Prepares a GPU pretraining run: what travels, checked before any GPU time.

Run here (on the CPU), then give the printed command to the device tool:

    python tools/prepare_gpu_pretraining.py --corpus runs/corpus_v2 \\
        --preset albert_tiny_en --train_steps 20000 --batch_size 512 \\
        --expected_tokens_per_second 3000000

It writes `.gpu/` (ignored by git; carried to the device by name):
  corpus/train.npz, corpus/eval.npz   the corpus and the held-out Persuasion,
                                      tokenized with the preset's vocabulary
                                      (`keras_albert.data.tokenized_corpus`)
  wheels/                             keras and keras-hub (and what they need
                                      that the device's image lacks), for
                                      Python 3.12 on x86-64
  command.sh                          the command the device runs
                                      (`tools/gpu_pretraining_run.sh` with
                                      this run's settings)

and refuses, saying by how much, a run whose upload (the tracked tree plus
`.gpu/`) would exceed the device's 64 MiB, or whose steps would not fit the
time budget at the expected throughput (`benchmarks/gpu_pretraining.py`
measures it; the JAX/PyTorch issue measured about 4.2M tokens/s for the
tiny shape on an H100). The device run stops at its last checkpoint inside
`--time_budget_minutes` anyway; this check keeps a run from being planned to
do what it cannot.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
UPLOAD_LIMIT = 64 * 2**20
# Installed on the device image (KINDS.md) and not carried: jax, numpy,
# h5py, absl-py, rich, ml-dtypes, packaging, regex, sentencepiece, pyyaml,
# requests, tqdm, tokenizers. Carried: what keras and keras-hub need beyond
# them; not kagglehub, which keras-hub does without (no downloads there).
WHEELS = ("keras==3.15.1", "keras-hub==0.32.0", "namex", "optree")
# Compiling, creating instances and writing the preset, beside the steps.
OVERHEAD_SECONDS = 150


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="a directory of .txt training files (persuasion.txt is the held-out set)")
    parser.add_argument("--preset", default="albert_tiny_en", help="bundled name or a directory inside the tree")
    parser.add_argument("--output", default=str(ROOT / ".gpu"))
    parser.add_argument("--train_steps", type=int, required=True)
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--dupe_factor", type=int, default=5)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--checkpoint_every", type=int, default=1000)
    parser.add_argument("--time_budget_minutes", type=float, default=9.0)
    parser.add_argument("--expected_tokens_per_second", type=float, required=True)
    parser.add_argument("--skip_wheels", action="store_true", help="reuse .gpu/wheels as it is")
    args = parser.parse_args(argv)
    if args.train_steps % args.checkpoint_every:
        parser.error(f"--checkpoint_every={args.checkpoint_every} must divide --train_steps={args.train_steps}")
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


def tracked_bytes():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return sum((ROOT / name).stat().st_size for name in listed.decode().split("\0") if name and (ROOT / name).is_file())


def folder_bytes(folder):
    return sum(path.stat().st_size for path in pathlib.Path(folder).rglob("*") if path.is_file())


def tokenize(args, output):
    from keras_albert.data.documents import read_documents
    from keras_albert.data.pretraining_instances import tokenize_documents
    from keras_albert.data.tokenized_corpus import write_tokenized_corpus
    from keras_albert.presets.preset_resolution import resolve_preset

    preset = pathlib.Path(resolve_preset(args.preset))
    proto = (preset / "assets" / "tokenizer" / "vocabulary.spm").read_bytes()
    import sentencepiece

    size = sentencepiece.SentencePieceProcessor(model_proto=proto).get_piece_size()
    corpus = pathlib.Path(args.corpus)
    held_out = corpus / "persuasion.txt"
    training = sorted(path for path in corpus.glob("*.txt") if path != held_out)
    if not training or not held_out.is_file():
        raise SystemExit(f"error: --corpus {args.corpus!r} must hold .txt training files and persuasion.txt")
    (output / "corpus").mkdir(parents=True, exist_ok=True)
    for name, files in (("train", training), ("eval", [held_out])):
        documents, tokens = write_tokenized_corpus(
            tokenize_documents(read_documents([str(f) for f in files]), proto),
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


def write_command(args, output):
    preset = args.preset if (ROOT / "keras_albert" / "presets" / args.preset).is_dir() else os.path.relpath(args.preset, ROOT)
    settings = (
        f"PRESET={preset} TRAIN_STEPS={args.train_steps} BATCH_SIZE={args.batch_size} "
        f"MAX_SEQ_LENGTH={args.max_seq_length} DUPE_FACTOR={args.dupe_factor} "
        f"LEARNING_RATE={args.learning_rate} CHECKPOINT_EVERY={args.checkpoint_every} "
        f"TIME_BUDGET_MINUTES={args.time_budget_minutes:g}"
    )
    (output / "command.sh").write_text(f"{settings} bash tools/gpu_pretraining_run.sh\n")
    return settings


def main(argv=None):
    args = parse(argv)
    seconds = check_time(args)
    output = pathlib.Path(args.output)
    tokenize(args, output)
    if not args.skip_wheels:
        download_wheels(output)
    settings = write_command(args, output)
    upload = tracked_bytes() + folder_bytes(output)
    if upload > UPLOAD_LIMIT:
        raise SystemExit(
            f"error: the upload would be {upload / 2**20:.1f} MiB (tree {tracked_bytes() / 2**20:.1f} + "
            f".gpu {folder_bytes(output) / 2**20:.1f}), {(upload - UPLOAD_LIMIT) / 2**20:.1f} MiB over the "
            "device's 64 MiB: drop corpus files or shrink the tree."
        )
    print(f"upload: {upload / 2**20:.1f} MiB of 64; expected run: {seconds / 60:.1f} of "
          f"{args.time_budget_minutes:g} minutes", flush=True)
    print(f"device command (carry [\".gpu\"]): {settings} bash tools/gpu_pretraining_run.sh", flush=True)


if __name__ == "__main__":
    main()
