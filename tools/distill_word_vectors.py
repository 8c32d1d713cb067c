"""Word-level distillation: a pretrainer learns all-MiniLM-L6-v2's contextual
word vectors beside masked-LM, on whole-word-masked text.

Why: masked-LM alone left the tiny preset at the frequent-piece plateau
(held-out MLM about 15 % for 7,000 steps; tools/progress/). A masked word's
target here is the teacher's vector for that word in context (384 numbers
that say what the word is and does), not one id out of 8,000, and every
unmasked word has a target too, so each step carries far more signal about
context. Words are the unit both vocabularies agree on: the student's
pieces of a whitespace word are averaged, projected to the teacher's width
and compared by cosine with the teacher's average over the same word
(tools/teacher_word_vectors.py). The teacher sees the text unmasked.

Reads a pretrainer preset (weights, heads, vocabulary), writes one with the
same heads; the projection is build-time only (kept beside, not in, the
preset). Progress:
held-out word cosine and masked-piece accuracy on texts kept out of
training, every --eval_every steps, to OUTPUT/curve.jsonl. Stopping and
re-running with the same OUTPUT continues from OUTPUT/preset at the step
in OUTPUT/state.json (the optimizer's moments start afresh).

Usage:
    python tools/distill_word_vectors.py --init_preset tools/progress/albert_tiny_en_v5/preset \\
        --word_vectors runs/minilm_word_vectors --output runs/word_distill --steps 3000
"""

import argparse
import json
import pathlib
import sys
import time

import numpy as np

import keras_albert  # noqa: F401  (first: quiet TensorFlow start-up)

import keras  # noqa: E402  # isort: skip
import tensorflow as tf  # noqa: E402  # isort: skip

from keras_albert.training import WarmupLinearDecay  # noqa: E402  # isort: skip
from keras_albert.utils.atomic_directory import atomic_directory  # noqa: E402  # isort: skip
from keras_albert.utils.atomic_file import write_file_atomically  # noqa: E402  # isort: skip

HELDOUT = 512


def load_texts(directory):
    directory = pathlib.Path(directory)
    texts = (directory / "texts.txt").read_text(encoding="utf-8").split("\n")[:-1]
    vectors = np.load(directory / "vectors.npy", mmap_mode="r")
    offsets = np.load(directory / "offsets.npy")
    if len(offsets) != len(texts) + 1:
        raise ValueError(f"{directory}: offsets.npy must have one more row than texts.txt")
    return texts, vectors, offsets


def align(tokenizer, texts, offsets, length):
    """Piece ids and each piece's word for the texts whose SentencePiece
    words match the teacher's; returns (indices kept, ids, words)."""
    starts_word = np.array([tokenizer.id_to_token(i).startswith("\u2581")
                            for i in range(tokenizer.vocabulary_size())])
    kept, all_ids, all_words = [], [], []
    for index, text in enumerate(texts):
        ids = np.asarray(tokenizer(text), np.int32)
        if len(ids) == 0 or len(ids) > length - 2 or not starts_word[ids[0]]:
            continue
        word = np.cumsum(starts_word[ids]) - 1
        if word[-1] + 1 != offsets[index + 1] - offsets[index]:
            continue
        kept.append(index)
        all_ids.append(ids)
        all_words.append(word.astype(np.int32))
    return kept, all_ids, all_words


class Batches:
    """Whole-word-masked batches with the teacher's word vectors."""

    def __init__(self, tokenizer, ids, words, vectors, offsets, indices, args):
        self.ids, self.words, self.vectors, self.offsets = ids, words, vectors, offsets
        self.indices, self.args = indices, args
        self.cls, self.sep, self.mask = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id
        # A word has at least one piece, and [CLS]/[SEP] hold no word.
        self.max_words = args.sequence_length - 2

    def make(self, rows, rng, partners=None):
        """One batch; `partners[b]`, when not None, is a second text packed
        after the first as segment 1 ([CLS] A [SEP] B [SEP]), the format the
        pretraining recipe uses, so positions past a short text and the
        second segment learn too."""
        a, length, predictions = self.args, self.args.sequence_length, self.args.max_predictions
        batch = len(rows)
        token_ids = np.zeros((batch, length), np.int32)
        segment_ids = np.zeros((batch, length), np.int32)
        padding = np.zeros((batch, length), np.int32)
        word_of_piece = np.full((batch, length), -1, np.int32)
        targets = np.zeros((batch, self.max_words, 384), np.float32)
        word_valid = np.zeros((batch, self.max_words), np.float32)
        positions = np.zeros((batch, predictions), np.int32)
        labels = np.zeros((batch, predictions), np.int32)
        weights = np.zeros((batch, predictions), np.float32)
        for b, row in enumerate(rows):
            parts = [row]
            partner = None if partners is None else partners[b]
            if partner is not None and len(self.ids[row]) + len(self.ids[partner]) + 3 <= length:
                parts.append(partner)
            ids = np.concatenate([self.ids[r] for r in parts])
            first_length = len(self.ids[row])
            # Word numbers run on across the texts; a piece's input position
            # skips [CLS] and, in the second text, the [SEP] between them.
            words, piece_positions, count = [], [], 0
            for part, r in enumerate(parts):
                words.append(self.words[r] + count)
                start = 1 if part == 0 else first_length + 2
                piece_positions.append(np.arange(len(self.ids[r])) + start)
                text = self.indices[r]
                text_words = int(self.words[r][-1]) + 1
                targets[b, count:count + text_words] = self.vectors[
                    self.offsets[text]:self.offsets[text + 1]]
                count += text_words
            words, piece_positions = np.concatenate(words), np.concatenate(piece_positions)
            word_valid[b, :count] = 1
            masked_ids = ids.copy()
            chosen = rng.permutation(count)[: max(1, int(round(a.mask_rate * count)))]
            slots = 0
            for w in chosen:
                pieces = np.flatnonzero(words == w)
                if slots + len(pieces) > predictions:
                    continue
                positions[b, slots:slots + len(pieces)] = piece_positions[pieces]
                labels[b, slots:slots + len(pieces)] = ids[pieces]
                weights[b, slots:slots + len(pieces)] = 1
                masked_ids[pieces] = self.mask
                slots += len(pieces)
            token_ids[b, 0] = self.cls
            token_ids[b, piece_positions] = masked_ids
            word_of_piece[b, piece_positions] = words
            token_ids[b, first_length + 1] = self.sep
            end = piece_positions[-1] + 1
            if len(parts) == 2:
                token_ids[b, end] = self.sep
                segment_ids[b, first_length + 2:end + 1] = 1
            padding[b, :end + 1] = 1
        return (token_ids, segment_ids, padding, word_of_piece, targets, word_valid,
                positions, labels, weights)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init_preset", required=True)
    parser.add_argument("--word_vectors", default="runs/minilm_word_vectors")
    parser.add_argument("--output", required=True)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--sequence_length", type=int, default=64)
    parser.add_argument("--max_predictions", type=int, default=12)
    parser.add_argument("--mask_rate", type=float, default=0.15)
    parser.add_argument("--learning_rate", type=float, default=5e-4)
    parser.add_argument("--warmup_steps", type=int, default=100)
    parser.add_argument("--word_weight", type=float, default=1.0)
    parser.add_argument("--eval_every", type=int, default=250)
    parser.add_argument("--init_projection", default=None,
                        help="word_projection.npz of an earlier run, to start from "
                             "(a fresh projection sends noise into the backbone at first)")
    parser.add_argument("--pair_rate", type=float, default=0.0,
                        help="share of training examples that pack a second text as "
                             "segment 1, as pretraining instances do (0.0-1.0)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 0.0 <= args.pair_rate <= 1.0:
        parser.error(f"--pair_rate={args.pair_rate}: expected a share from 0.0 to 1.0")

    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    state_path = output / "state.json"
    state = json.loads(state_path.read_text()) if state_path.exists() else {"step": 0}
    source = output / "preset" if state["step"] else pathlib.Path(args.init_preset)
    pretrainer = keras_albert.AlbertPretrainer.from_preset(str(source))
    tokenizer = keras_albert.AlbertTokenizer.from_preset(str(source))
    backbone = pretrainer.backbone

    texts, vectors, offsets = load_texts(args.word_vectors)
    started = time.time()
    kept, ids, words = align(tokenizer, texts, offsets, args.sequence_length)
    print(f"{len(kept)}/{len(texts)} texts aligned with the teacher's words "
          f"({time.time() - started:.0f} s)", flush=True)
    batches = Batches(tokenizer, ids, words, vectors, offsets, kept, args)
    rng = np.random.default_rng(args.seed + state["step"])
    heldout_rows = np.arange(HELDOUT)
    train_rows = np.arange(HELDOUT, len(kept))
    heldout = batches.make(heldout_rows, np.random.default_rng(12345))
    # The same held-out texts in pairs: what the pretraining format asks.
    heldout_pairs = batches.make(heldout_rows, np.random.default_rng(12345),
                                 partners=np.roll(heldout_rows, 1))

    projection = keras.layers.Dense(384, name="word_projection")
    projection.build((None, backbone.hidden_dim))
    projection_path = output / "word_projection.npz"
    start_projection = (projection_path if state["step"] and projection_path.exists()
                        else args.init_projection)
    if start_projection:
        saved = np.load(start_projection)
        projection.set_weights([saved["kernel"], saved["bias"]])
    optimizer = keras.optimizers.AdamW(
        learning_rate=WarmupLinearDecay(args.learning_rate, args.warmup_steps, args.steps),
        weight_decay=0.01, clipnorm=1.0)
    variables = pretrainer.masked_lm_head.trainable_variables + backbone.trainable_variables
    variables = list({id(v): v for v in variables}.values()) + projection.trainable_variables
    optimizer.build(variables)

    def losses(batch, training):
        (token_ids, segment_ids, padding, word_of_piece, targets, word_valid,
         positions, labels, weights) = batch
        sequence = backbone({"token_ids": token_ids, "segment_ids": segment_ids,
                             "padding_mask": padding}, training=training)["sequence_output"]
        # [B, W, L] averaging matrix: each word's pieces, equally weighted.
        pool = tf.one_hot(word_of_piece, batches.max_words, axis=1)
        pool = pool / tf.maximum(tf.reduce_sum(pool, -1, keepdims=True), 1.0)
        student = projection(tf.matmul(pool, sequence))
        cosine = -keras.losses.cosine_similarity(targets, student, axis=-1)
        word_loss = tf.reduce_sum((1.0 - cosine) * word_valid) / tf.reduce_sum(word_valid)
        logits = pretrainer.masked_lm_head(sequence, positions)
        piece_loss = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
        mlm_loss = tf.reduce_sum(piece_loss * weights) / tf.reduce_sum(weights)
        correct = tf.cast(tf.argmax(logits, -1, output_type=tf.int32) == labels, "float32")
        return {
            "loss": mlm_loss + args.word_weight * word_loss,
            "mlm_loss": mlm_loss,
            "word_cosine": tf.reduce_sum(cosine * word_valid) / tf.reduce_sum(word_valid),
            "mlm_accuracy": tf.reduce_sum(correct * weights) / tf.reduce_sum(weights),
        }

    @tf.function
    def train_step(batch):
        with tf.GradientTape() as tape:
            values = losses(batch, True)
        optimizer.apply_gradients(zip(tape.gradient(values["loss"], variables), variables))
        return values

    evaluate = tf.function(lambda batch: losses(batch, False))

    def save(step):
        with atomic_directory(output / "preset") as staging:
            pretrainer.save_to_preset(staging)
            tokenizer.save_to_preset(staging)
        kernel, bias = projection.get_weights()
        np.savez(projection_path, kernel=kernel, bias=bias)
        write_file_atomically(state_path, json.dumps({"step": step}))

    def evaluate_both():
        single = {k: round(float(v), 4) for k, v in evaluate(heldout).items()}
        pairs = {k: round(float(v), 4) for k, v in evaluate(heldout_pairs).items()}
        return {**single, **{f"pairs_{k}": v for k, v in pairs.items()}}

    step = state["step"]
    if step == 0:
        first = evaluate_both()
        print(f"step 0 held-out {first}", flush=True)
        with open(output / "curve.jsonl", "a") as curve:
            curve.write(json.dumps({"step": 0, "heldout": first}) + "\n")
    optimizer.iterations.assign(step)
    window, clock = [], time.time()
    while step < args.steps:
        rows = rng.choice(train_rows, args.batch_size, replace=False)
        partners = [rng.choice(train_rows) if rng.random() < args.pair_rate else None
                    for _ in rows]
        window.append({k: float(v) for k, v in
                       train_step(batches.make(rows, rng, partners)).items()})
        step += 1
        if step % 50 == 0:
            mean = {k: round(float(np.mean([w[k] for w in window])), 4) for k in window[0]}
            print(f"step {step}: {mean} ({(time.time() - clock) / len(window):.2f} s/step)", flush=True)
            window, clock = [], time.time()
        if step % args.eval_every == 0 or step == args.steps:
            held = evaluate_both()
            print(f"step {step} held-out {held}", flush=True)
            with open(output / "curve.jsonl", "a") as curve:
                curve.write(json.dumps({"step": step, "heldout": held}) + "\n")
            save(step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
