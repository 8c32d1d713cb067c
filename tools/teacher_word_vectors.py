"""Per-word contextual vectors from all-MiniLM-L6-v2, for word-level distillation.

A build-time tool (`pip install -e '.[teacher]'`), beside
tools/teacher_embeddings.py (whole-sentence vectors). For each text it runs
the teacher once and averages its last-layer token vectors over each
whitespace-separated word (the unit both the teacher's WordPiece and our
SentencePiece pieces agree on), so that a student with another vocabulary
can learn the teacher's view of every word in context
(tools/distill_word_vectors.py). Texts are lines of
tools/build_english_corpus.py's files, checked against the held-out sets.

Writes a directory with `texts.txt` (one text per line), `vectors.npy`
(float16, [words, 384], every text's words in order) and `offsets.npy`
(int64, [texts + 1]: text i owns rows offsets[i]:offsets[i + 1]).

Usage:
    python tools/teacher_word_vectors.py --corpus_dir runs/corpus \\
        --output runs/minilm_word_vectors --max_texts 24000 --seed 0
"""

import argparse
import pathlib
import random
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from teacher_embeddings import corpus_texts  # noqa: E402
from teacher_embeddings import teacher_model  # noqa: E402

from keras_albert.datasets.heldout import HeldOutGuard  # noqa: E402
from keras_albert.utils.atomic_file import write_file_atomically  # noqa: E402


def word_spans(text):
    """(start, end) character spans of the whitespace-separated words."""
    spans, start = [], None
    for index, character in enumerate(text + " "):
        if character.isspace():
            if start is not None:
                spans.append((start, index))
                start = None
        elif start is None:
            start = index
    return spans


def word_vectors(model, texts, batch_size=64):
    """[words, dim] per text: the teacher's last-layer token vectors averaged
    over each whitespace word (words the tokenizer drops get none: the
    text is then skipped, None)."""
    import torch

    tokenizer, encoder = model.tokenizer, model[0].auto_model
    results = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start:start + batch_size]
        encoded = tokenizer(batch, return_offsets_mapping=True, padding=True,
                            truncation=True, max_length=256, return_tensors="pt")
        offsets = encoded.pop("offset_mapping").numpy()
        with torch.no_grad():
            hidden = encoder(**encoded).last_hidden_state.numpy()
        for row, text in enumerate(batch):
            spans = word_spans(text)
            sums = np.zeros((len(spans), hidden.shape[-1]), np.float32)
            counts = np.zeros(len(spans), np.int64)
            word = 0
            for token, (begin, end) in enumerate(offsets[row]):
                if end <= begin:  # [CLS], [SEP], padding
                    continue
                while word < len(spans) and spans[word][1] <= begin:
                    word += 1
                if word < len(spans):
                    sums[word] += hidden[row, token]
                    counts[word] += 1
            results.append(None if (counts == 0).any() else sums / counts[:, None])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus_dir", default="runs/corpus")
    parser.add_argument("--output", default="runs/minilm_word_vectors")
    parser.add_argument("--max_texts", type=int, default=24000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts = corpus_texts(args.corpus_dir, args.seed)
    if len(texts) > args.max_texts:
        texts = random.Random(args.seed).sample(texts, args.max_texts)
    HeldOutGuard().check(texts, where="the teacher's texts")
    model = teacher_model()
    started = time.time()
    kept, vectors, offsets = [], [], [0]
    for start in range(0, len(texts), 2048):
        for text, words in zip(texts[start:start + 2048], word_vectors(model, texts[start:start + 2048])):
            if words is None:
                continue
            kept.append(text)
            vectors.append(words.astype(np.float16))
            offsets.append(offsets[-1] + len(words))
        print(f"{min(start + 2048, len(texts))}/{len(texts)} texts, {offsets[-1]} words, "
              f"{time.time() - started:.0f} s", flush=True)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    np.save(output / "vectors.npy", np.concatenate(vectors))
    np.save(output / "offsets.npy", np.asarray(offsets, np.int64))
    # Texts last: a directory with texts.txt is complete.
    write_file_atomically(output / "texts.txt", "\n".join(kept) + "\n")
    print(f"wrote {output}: {len(kept)} texts ({len(texts) - len(kept)} skipped), {offsets[-1]} words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
