"""Pretraining-data speed: keras_albert vs Google's create_pretraining_data.py.

Both sides read the same text file (one sentence per line, a blank line
between documents: Google's format) cut from the bundled Jane Austen novels,
with the same SentencePiece vocabulary and settings (max_seq_length 512,
max_predictions_per_seq 20, masked_lm_prob 0.15, short_seq_prob 0.1,
3-gram masking, SOP, dupe_factor 1), and write a TFRecord file.

The baseline is a faithful re-implementation of the logic of
google-research/albert `create_pretraining_data.py` + `tokenization.py`
(written anew here, not copied): per-line `preprocess_text` and
`encode_pieces`, the whole corpus in memory, `create_instances_from_document`
with string tokens, `create_masked_lm_predictions` with its per-call
`_is_start_piece_sp` and per-step `np.random.choice`, and one
`tf.train.Example` per instance. Only its per-instance logging is left out
(which favours the baseline).

Prints instances per second for "create" (text -> instances in memory) and
"end to end" (text -> TFRecord file) for both, and the ratio ours / theirs:
the median over `--rounds` (default 3) rounds, ours and theirs interleaved
in each, with the spread (min-max). Writes
`benchmarks/results/pretraining_data.json` (or `--output`) with the
command, the date and the machine's cores.

Usage:
    python benchmarks/pretraining_data.py [--sentences 20000] [--max_seq_length 512]
        [--rounds 3] [--output pretraining_data.json]
"""

import argparse
import collections
import os
import random
import statistics
import sys
import tempfile
import time
import unicodedata

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import sentencepiece  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_albert.data.documents import read_documents  # noqa: E402
from keras_albert.data.pretraining_instances import create_pretraining_instances  # noqa: E402
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords  # noqa: E402
from keras_albert.data.sentencepiece_training import train_sentencepiece  # noqa: E402
from keras_albert.datasets import load_austen_documents  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import check_rounds  # noqa: E402
from recording import show  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402

# --- The baseline: Google's logic, re-implemented ---------------------------


def _google_preprocess_text(text, lower=True):
    text = " ".join(text.strip().split())
    text = unicodedata.normalize("NFKD", text)
    text = "".join([c for c in text if not unicodedata.combining(c)])
    return text.lower() if lower else text


class _GoogleSentencePieceTokenizer:
    """`FullTokenizer` with `spm_model_file`: pieces as strings."""

    def __init__(self, proto):
        self.sp_model = sentencepiece.SentencePieceProcessor(model_proto=proto)
        self.vocab = {
            self.sp_model.IdToPiece(i): i for i in range(self.sp_model.GetPieceSize())
        }

    def tokenize(self, text):
        # `encode_pieces`: a piece such as "1990," is split into "1990" ",".
        result = []
        for piece in self.sp_model.EncodeAsPieces(text):
            if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
                sub = self.sp_model.EncodeAsPieces(piece[:-1].replace("▁", ""))
                if piece[0] != "▁" and sub[0][0] == "▁":
                    sub = sub[1:] if len(sub[0]) == 1 else [sub[0][1:]] + sub[1:]
                result.extend(sub + [piece[-1]])
            else:
                result.append(piece)
        return result

    def convert_tokens_to_ids(self, tokens):
        return [self.sp_model.PieceToId(token) for token in tokens]


GoogleInstance = collections.namedtuple(
    "GoogleInstance",
    "tokens segment_ids masked_lm_positions masked_lm_labels is_random_next "
    "token_boundary",
)


def google_create_training_instances(
    input_files, tokenizer, max_seq_length, dupe_factor, short_seq_prob,
    masked_lm_prob, max_predictions_per_seq, rng, ngram=3,
):
    all_documents = [[]]
    for input_file in input_files:
        with open(input_file, "r", encoding="utf-8") as reader:
            for line in reader:
                line = _google_preprocess_text(line, lower=True)
                if not line:
                    all_documents.append([])
                tokens = tokenizer.tokenize(line)
                if tokens:
                    all_documents[-1].append(tokens)
    all_documents = [d for d in all_documents if d]
    rng.shuffle(all_documents)
    vocab_words = list(tokenizer.vocab.keys())
    instances = []
    for _ in range(dupe_factor):
        for document_index in range(len(all_documents)):
            instances.extend(
                _google_instances_from_document(
                    all_documents, document_index, max_seq_length, short_seq_prob,
                    masked_lm_prob, max_predictions_per_seq, vocab_words, rng, ngram,
                )
            )
    rng.shuffle(instances)
    return instances


def _google_instances_from_document(
    all_documents, document_index, max_seq_length, short_seq_prob,
    masked_lm_prob, max_predictions_per_seq, vocab_words, rng, ngram,
):
    document = all_documents[document_index]
    max_num_tokens = max_seq_length - 3
    target_seq_length = max_num_tokens
    if rng.random() < short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)
    instances = []
    current_chunk, current_length, i = [], 0, 0
    while i < len(document):
        current_chunk.append(document[i])
        current_length += len(document[i])
        if i == len(document) - 1 or current_length >= target_seq_length:
            if current_chunk:
                a_end = 1
                if len(current_chunk) >= 2:
                    a_end = rng.randint(1, len(current_chunk) - 1)
                tokens_a = [t for segment in current_chunk[:a_end] for t in segment]
                tokens_b = []
                if len(current_chunk) == 1:
                    is_random_next = True
                    target_b_length = target_seq_length - len(tokens_a)
                    for _ in range(10):
                        random_index = rng.randint(0, len(all_documents) - 1)
                        if random_index != document_index:
                            break
                    random_document = all_documents[random_index]
                    start = rng.randint(0, len(random_document) - 1)
                    for j in range(start, len(random_document)):
                        tokens_b.extend(random_document[j])
                        if len(tokens_b) >= target_b_length:
                            break
                    i -= len(current_chunk) - a_end
                elif rng.random() < 0.5:  # SOP: swap the segments
                    is_random_next = True
                    for segment in current_chunk[a_end:]:
                        tokens_b.extend(segment)
                    tokens_a, tokens_b = tokens_b, tokens_a
                else:
                    is_random_next = False
                    for segment in current_chunk[a_end:]:
                        tokens_b.extend(segment)
                _google_truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
                tokens = ["[CLS]"] + tokens_a + ["[SEP]"] + tokens_b + ["[SEP]"]
                segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
                tokens, positions, labels, boundary = _google_masked_lm(
                    tokens, masked_lm_prob, max_predictions_per_seq, vocab_words,
                    rng, ngram,
                )
                instances.append(
                    GoogleInstance(
                        tokens, segment_ids, positions, labels, is_random_next,
                        boundary,
                    )
                )
            current_chunk, current_length = [], 0
        i += 1
    return instances


def _google_is_start_piece(piece):
    # As `_is_start_piece_sp`: the sets are rebuilt at every call.
    special_pieces = set(list('!"#$%&"()*+,-./:;?@[\\]^_`{|}~'))
    special_pieces.add("€".encode("utf-8"))
    special_pieces.add("£".encode("utf-8"))
    english_chars = set(list("abcdefghijklmnopqrstuvwxyz"))
    return (
        piece.startswith("▁")
        or piece.startswith("<")
        or piece in special_pieces
        or not all(
            [str(c).lower() in english_chars.union(special_pieces) for c in piece]
        )
    )


def _google_masked_lm(tokens, masked_lm_prob, max_predictions_per_seq, vocab_words,
                      rng, ngram):
    cand_indexes = []
    token_boundary = [0] * len(tokens)
    for i, token in enumerate(tokens):
        if token == "[CLS]" or token == "[SEP]":
            token_boundary[i] = 1
            continue
        if len(cand_indexes) >= 1 and not _google_is_start_piece(token):
            cand_indexes[-1].append(i)
        else:
            cand_indexes.append([i])
            if _google_is_start_piece(token):
                token_boundary[i] = 1
    output_tokens = list(tokens)
    num_to_predict = min(
        max_predictions_per_seq, max(1, int(round(len(tokens) * masked_lm_prob)))
    )
    ngrams = np.arange(1, ngram + 1, dtype=np.int64)
    pvals = 1.0 / np.arange(1, ngram + 1)
    pvals /= pvals.sum(keepdims=True)
    ngram_indexes = []
    for idx in range(len(cand_indexes)):
        ngram_indexes.append([cand_indexes[idx : idx + n] for n in ngrams])
    rng.shuffle(ngram_indexes)
    masked_lms = []
    covered_indexes = set()
    for cand_index_set in ngram_indexes:
        if len(masked_lms) >= num_to_predict:
            break
        if not cand_index_set:
            continue
        # The original's "skip covered pieces" loop; it has no effect.
        for index_set in cand_index_set[0]:
            for index in index_set:
                if index in covered_indexes:
                    continue
        allowed = pvals[: len(cand_index_set)]
        n = np.random.choice(
            ngrams[: len(cand_index_set)], p=allowed / allowed.sum(keepdims=True)
        )
        index_set = sum(cand_index_set[n - 1], [])
        n -= 1
        while len(masked_lms) + len(index_set) > num_to_predict:
            if n == 0:
                break
            index_set = sum(cand_index_set[n - 1], [])
            n -= 1
        if len(masked_lms) + len(index_set) > num_to_predict:
            continue
        if any(index in covered_indexes for index in index_set):
            continue
        for index in index_set:
            covered_indexes.add(index)
            if rng.random() < 0.8:
                masked_token = "[MASK]"
            elif rng.random() < 0.5:
                masked_token = tokens[index]
            else:
                masked_token = vocab_words[rng.randint(0, len(vocab_words) - 1)]
            output_tokens[index] = masked_token
            masked_lms.append((index, tokens[index]))
    rng.shuffle(ngram_indexes)  # the original shuffles again (for permutation)
    masked_lms.sort(key=lambda x: x[0])
    positions = [index for index, _ in masked_lms]
    labels = [label for _, label in masked_lms]
    return output_tokens, positions, labels, token_boundary


def _google_truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc[0]
        else:
            trunc.pop()


def google_write_examples(instances, tokenizer, max_seq_length,
                          max_predictions_per_seq, output_file):
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    with tf.io.TFRecordWriter(output_file) as writer:
        for instance in instances:
            input_ids = tokenizer.convert_tokens_to_ids(instance.tokens)
            input_mask = [1] * len(input_ids)
            segment_ids = list(instance.segment_ids)
            token_boundary = list(instance.token_boundary)
            while len(input_ids) < max_seq_length:
                input_ids.append(0)
                input_mask.append(0)
                segment_ids.append(0)
                token_boundary.append(0)
            positions = list(instance.masked_lm_positions)
            label_ids = tokenizer.convert_tokens_to_ids(instance.masked_lm_labels)
            weights = [1.0] * len(label_ids)
            while len(positions) < max_predictions_per_seq:
                positions.append(0)
                label_ids.append(0)
                weights.append(0.0)
            features = collections.OrderedDict()
            features["input_ids"] = ints(input_ids)
            features["input_mask"] = ints(input_mask)
            features["segment_ids"] = ints(segment_ids)
            features["token_boundary"] = ints(token_boundary)
            features["masked_lm_positions"] = ints(positions)
            features["masked_lm_ids"] = ints(label_ids)
            features["masked_lm_weights"] = tf.train.Feature(
                float_list=tf.train.FloatList(value=weights)
            )
            features["next_sentence_labels"] = ints([int(instance.is_random_next)])
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
            if random.randint(1, 100) >= 97:
                writer.flush()


# --- The run -----------------------------------------------------------------


def make_corpus(directory, num_sentences, sentences_per_document):
    """Austen's first sentences in Google's format: (path, all sentences)."""
    everything = [s for novel in load_austen_documents(sentences=True) for s in novel]
    sentences = everything[:num_sentences]
    path = os.path.join(directory, "corpus.txt")
    with open(path, "w", encoding="utf-8") as file:
        for start in range(0, len(sentences), sentences_per_document):
            file.write("\n".join(sentences[start : start + sentences_per_document]))
            file.write("\n\n")
    return path, everything


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=20000)
    parser.add_argument("--sentences_per_document", type=int, default=200)
    parser.add_argument("--vocabulary_size", type=int, default=8000)
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", default="pretraining_data.json", help="under benchmarks/results/ unless a path")
    args = parser.parse_args()
    check_rounds(args.rounds)
    settings = dict(
        max_seq_length=args.max_seq_length,
        max_predictions_per_seq=args.max_predictions_per_seq,
        masked_lm_prob=0.15,
        short_seq_prob=0.1,
    )
    with tempfile.TemporaryDirectory() as directory:
        corpus, all_sentences = make_corpus(
            directory, args.sentences, args.sentences_per_document
        )
        # The vocabulary is trained on all five novels, outside the timings.
        proto = train_sentencepiece(all_sentences, args.vocabulary_size)
        print(
            f"corpus: {min(args.sentences, len(all_sentences))} Austen "
            "sentences, "
            f"{os.path.getsize(corpus) / 1e6:.2f} MB, documents of "
            f"{args.sentences_per_document} sentences; vocabulary "
            f"{args.vocabulary_size}; settings {settings}, SOP, 3-grams, "
            "dupe_factor 1"
        )

        rates = {key: [] for key in ("ours create", "google create", "ours end to end", "google end to end")}
        for round_index in range(args.rounds):
            ours, ours_create, ours_total = run_ours(corpus, proto, directory, args.seed, settings)
            theirs, theirs_create, theirs_total = run_google(corpus, proto, directory, args)
            rates["ours create"].append(len(ours) / ours_create)
            rates["google create"].append(len(theirs) / theirs_create)
            rates["ours end to end"].append(len(ours) / ours_total)
            rates["google end to end"].append(len(theirs) / theirs_total)
            print(f"round {round_index + 1}: create {ours_create:.2f} s vs {theirs_create:.2f} s, "
                  f"end to end {ours_total:.2f} s vs {theirs_total:.2f} s", flush=True)

    print(f"instances: ours {len(ours)}, google {len(theirs)}; median [min-max] over {args.rounds} rounds")
    rows = {}
    for label, key in (("create (text -> instances)", "create"), ("end to end (text -> TFRecord)", "end to end")):
        ours_rates, theirs_rates = rates[f"ours {key}"], rates[f"google {key}"]
        ratios = [a / b for a, b in zip(ours_rates, theirs_rates)]
        rows[key] = {"ours_instances_per_s": spread(ours_rates), "google_instances_per_s": spread(theirs_rates),
                     "ratio": spread(ratios)}
        print(
            f"{label}: keras_albert {show(ours_rates, 1, 0)} instances/s, "
            f"google {show(theirs_rates, 1, 0)} instances/s, "
            f"ratio {statistics.median(ratios):.1f}x [{min(ratios):.1f}-{max(ratios):.1f}]"
        )
    write_result(args.output, {
        "settings": dict(settings, sentences=args.sentences, sentences_per_document=args.sentences_per_document,
                         vocabulary_size=args.vocabulary_size, seed=args.seed, rounds=args.rounds,
                         sentence_task="sop", ngram=3, dupe_factor=1),
        "instances": {"ours": len(ours), "google": len(theirs)},
        "rows": rows,
    })


def run_ours(corpus, proto, directory, seed, settings):
    """(instances, create seconds, end-to-end seconds); streaming, lazily."""
    start = time.perf_counter()
    ours = list(create_pretraining_instances(read_documents(corpus), proto, seed=seed, **settings))
    ours_create = time.perf_counter() - start
    start = time.perf_counter()
    write_pretraining_tfrecords(ours, os.path.join(directory, "ours.tfrecord"))
    return ours, ours_create, ours_create + time.perf_counter() - start


def run_google(corpus, proto, directory, args):
    """(instances, create seconds, end-to-end seconds) of the baseline."""
    rng = random.Random(args.seed)
    np.random.seed(args.seed)
    tokenizer = _GoogleSentencePieceTokenizer(proto)
    start = time.perf_counter()
    theirs = google_create_training_instances(
        [corpus], tokenizer, args.max_seq_length, 1, 0.1, 0.15,
        args.max_predictions_per_seq, rng,
    )
    theirs_create = time.perf_counter() - start
    start = time.perf_counter()
    google_write_examples(
        theirs, tokenizer, args.max_seq_length, args.max_predictions_per_seq,
        os.path.join(directory, "theirs.tfrecord"),
    )
    return theirs, theirs_create, theirs_create + time.perf_counter() - start


if __name__ == "__main__":
    main()
