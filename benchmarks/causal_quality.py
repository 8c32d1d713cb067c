"""Quality of a causal LM preset against an n-gram model and GPT-2 (issue 37).

    python benchmarks/causal_quality.py --preset DIR --train_corpus .gpu/corpus/train.npz \\
        --models albert,kneser_ney                        # on the CPU
    KERAS_BACKEND=jax python benchmarks/causal_quality.py --preset DIR \\
        --train_corpus .gpu/corpus/train.npz --models albert,gpt2 \\
        --train_gpt2_tokens 655360000 --gpt2_output /tmp/gpt2 --precision mixed_bfloat16

Measures, for each model of `--models`:

- `albert`: the `AlbertCausalLM` preset `--preset` (it also gives the
  vocabulary and the window length);
- `kneser_ney`: an interpolated Kneser-Ney `--kn_order`-gram model (NLTK's
  `KneserNeyInterpolated`, made fast in benchmarks/kneser_ney.py, which says
  what differs) counted on all of `--train_corpus` (`--kn_train_tokens`
  takes fewer: whole documents in a seeded order); its discount is picked
  from `--kn_discounts` on a seeded carve-out of the training documents
  (`--kn_carve_out_tokens`), then the carve-out is counted too. Only the
  n-grams that probabilities after the scored contexts read are counted:
  the same probabilities as counting all (`--kn_count_all`, about 1.5 GB
  of NLTK's memory per million tokens); the 12.1M-token corpus then takes
  about 3 minutes and 4.7 GB on the CPU;
- `gpt2`: keras-hub's `GPT2CausalLM`, either `--gpt2_preset` (trained
  elsewhere, e.g. by this script) or trained here on `--train_corpus` for
  `--train_gpt2_tokens` tokens with the causal pretraining pipeline's
  windows, loss and AdamW schedule, saved to `--gpt2_output`. Its shape:
  the preset's depth and heads, the width whose parameter count comes
  nearest the preset's (both counts recorded), feed-forward 4 x width.

Two measures, the same items for every model:

1. Held-out perplexity per SentencePiece token of the preset's vocabulary
   on `--eval_corpus` (default: Persuasion, bundled, held out of every
   pretraining corpus): the documents run as one stream (`[CLS] text
   [SEP]`), cut into windows of `--window_length` tokens as the pretraining
   pipeline cuts its held-out set; each token after the first is scored
   once, from the tokens before it in its window (the n-gram model sees
   the last order - 1 of them).
2. Zero-shot cloze in the spirit of GPT-2's LAMBADA: paragraphs of
   Persuasion (`--cloze_text`: one paragraph a line) whose last word is all
   letters, preceded by a space and followed by nothing but punctuation,
   that also occurs earlier in the paragraph, with at least
   `--cloze_min_context_words` words before it. The model reads `[CLS]` and
   the paragraph up to that word (cut from the left to fit the window) and
   must produce the whole word greedily: each of its pieces the most likely
   one, then a piece that does not go on with the word. n, accuracy and a
   95 % Wilson interval per model; Newcombe intervals of the differences
   (benchmarks/intervals.py: conservative for models scored on the same
   passages).

Nothing here is chosen on Persuasion. Writes benchmarks/results/
causal_quality.json (`--output`) with every setting, the command, date,
machine, threads and versions. Needs no TensorFlow with KERAS_BACKEND=jax.
"""

import argparse
import hashlib
import json
import math
import pathlib
import re
import sys
import time

from recording import write_result

MODELS = ("albert", "kneser_ney", "gpt2")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
TRAINING_RECORD = "causal_quality_training.json"
WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", required=True, help="an AlbertCausalLM preset (directory or name)")
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, from {list(MODELS)}")
    parser.add_argument("--eval_corpus", default=None,
                        help="a tokenized corpus (.npz) or text files; default: the bundled Persuasion")
    parser.add_argument("--train_corpus", default=None,
                        help="a tokenized corpus (.npz), a .txt file or a directory of them: "
                             "what the n-gram model counts and GPT-2 trains on")
    parser.add_argument("--window_length", type=int, default=None, help="default: the preset's positions")
    parser.add_argument("--batch_size", type=int, default=32, help="for scoring")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kn_order", type=int, default=5)
    parser.add_argument("--kn_train_tokens", type=int, default=0,
                        help="training tokens the n-gram model counts (0: all of them)")
    parser.add_argument("--kn_carve_out_tokens", type=int, default=20_000)
    parser.add_argument("--kn_max_ngrams", type=int, default=60_000_000,
                        help="NLTK's bound on distinct n-grams counted (about 300 bytes each)")
    parser.add_argument("--kn_count_all", action="store_true",
                        help="count every n-gram, not only those the scored contexts read (same numbers, "
                             "more memory)")
    parser.add_argument("--kn_discounts", default="0.1,0.25,0.5,0.75,0.9,1.0")
    parser.add_argument("--cloze_text", default=None,
                        help="a text file of paragraphs, one a line; default: the bundled Persuasion")
    parser.add_argument("--cloze_min_context_words", type=int, default=20)
    parser.add_argument("--max_cloze_passages", type=int, default=0, help="0: all that qualify")
    parser.add_argument("--gpt2_preset", default=None, help="a trained keras-hub GPT2CausalLM preset")
    parser.add_argument("--train_gpt2_tokens", type=int, default=0,
                        help="train GPT-2 here for this many tokens (batch x window per step)")
    parser.add_argument("--gpt2_output", default=None, help="a new directory for the trained GPT-2 preset")
    parser.add_argument("--gpt2_hidden_dim", type=int, default=None, help="default: matched to the preset's parameters")
    parser.add_argument("--gpt2_dropout", type=float, default=0.0)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--train_batch_size", type=int, default=512)
    parser.add_argument("--steps_per_execution", type=int, default=1)
    parser.add_argument("--precision", choices=PRECISIONS, default="float32", help="for training GPT-2")
    parser.add_argument("--time_budget_minutes", type=float, default=0.0,
                        help="stop GPT-2's training after this long (0: no limit); the record says how far it got")
    parser.add_argument("--output", default="causal_quality.json")
    args = parser.parse_args(argv)

    args.models = [name.strip() for name in args.models.split(",") if name.strip()]
    unknown = sorted(set(args.models) - set(MODELS))
    if unknown or not args.models:
        parser.error(f"--models must name some of {list(MODELS)}; got {unknown or 'nothing'}")
    for name in ("batch_size", "kn_order", "kn_max_ngrams", "cloze_min_context_words", "train_batch_size",
                 "steps_per_execution"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a positive integer; got {getattr(args, name)}")
    for name in ("kn_train_tokens", "kn_carve_out_tokens", "max_cloze_passages", "train_gpt2_tokens",
                 "time_budget_minutes"):
        if getattr(args, name) < 0:
            parser.error(f"--{name} must be >= 0; got {getattr(args, name)}")
    if args.window_length is not None and args.window_length < 2:
        parser.error(f"--window_length must be at least 2; got {args.window_length}")
    try:
        args.kn_discounts = [float(value) for value in args.kn_discounts.split(",")]
    except ValueError:
        parser.error(f"--kn_discounts must be comma-separated numbers in (0, 1]; got {args.kn_discounts!r}")
    if not args.kn_discounts or not all(0 < value <= 1 for value in args.kn_discounts):
        parser.error(f"--kn_discounts must be comma-separated numbers in (0, 1]; got {args.kn_discounts}")
    if not 0 <= args.gpt2_dropout < 1:
        parser.error(f"--gpt2_dropout must be in [0, 1); got {args.gpt2_dropout}")
    if args.learning_rate <= 0:
        parser.error(f"--learning_rate must be positive; got {args.learning_rate}")
    if args.gpt2_hidden_dim is not None and args.gpt2_hidden_dim < 1:
        parser.error(f"--gpt2_hidden_dim must be a positive integer; got {args.gpt2_hidden_dim}")
    if "gpt2" in args.models:
        if bool(args.gpt2_preset) == bool(args.train_gpt2_tokens):
            parser.error("--models includes gpt2: give either --gpt2_preset (trained) or "
                         "--train_gpt2_tokens (train it here), not both or neither")
        if args.train_gpt2_tokens and not args.gpt2_output:
            parser.error("--train_gpt2_tokens needs --gpt2_output, a new directory for the trained preset")
        if args.gpt2_output and pathlib.Path(args.gpt2_output).exists():
            parser.error(f"--gpt2_output {args.gpt2_output!r} exists; name a new directory")
    elif args.gpt2_preset or args.train_gpt2_tokens:
        parser.error("--gpt2_preset and --train_gpt2_tokens need gpt2 in --models")
    needs_training_text = "kneser_ney" in args.models or args.train_gpt2_tokens
    if needs_training_text and not args.train_corpus:
        parser.error("--train_corpus is needed for kneser_ney and for --train_gpt2_tokens")
    for name in ("train_corpus", "eval_corpus", "cloze_text", "gpt2_preset"):
        value = getattr(args, name)
        if value and not pathlib.Path(value).exists():
            parser.error(f"--{name} {value!r} does not exist")
    return args


# --- Vocabulary, corpora and windows -------------------------------------


class Vocabulary:
    """The preset's SentencePiece model and lowercasing, read from its files
    (no keras tokenizer: that would need TensorFlow's text ops here)."""

    def __init__(self, preset_dir):
        import sentencepiece

        path = preset_dir / "assets" / "tokenizer" / "vocabulary.spm"
        if not path.is_file():
            raise ValueError(f"--preset {str(preset_dir)!r} has no assets/tokenizer/vocabulary.spm")
        self.proto = path.read_bytes()
        self.processor = sentencepiece.SentencePieceProcessor(model_proto=self.proto)
        self.size = self.processor.get_piece_size()
        config = json.loads((preset_dir / "tokenizer.json").read_text())["config"]
        self.lowercase = bool(config.get("lowercase", True))
        self.start_id = self.processor.piece_to_id("[CLS]")
        self.end_id = self.processor.piece_to_id("[SEP]")

    def encode(self, text):
        from keras_albert.data.pretraining_instances import tokenize_documents

        documents = list(tokenize_documents([[text]], self.processor, self.lowercase))
        return documents[0].token_ids.tolist() if documents else []

    def continues_word(self):
        """Per id: True where the piece goes on with the word before it (no
        word-start mark, starts with a letter, digit or an apostrophe and a
        letter): what may not follow a predicted last word."""
        import numpy as np

        flags = np.zeros(self.size, bool)
        for index in range(self.size):
            if self.processor.is_control(index) or self.processor.is_unknown(index):
                continue
            piece = self.processor.id_to_piece(index)
            flags[index] = not piece.startswith("\u2581") and (
                piece[:1].isalnum() or (piece[:1] == "'" and piece[1:2].isalpha()))
        return flags


def corpus_documents(path, vocabulary):
    """Each document's ids: an `.npz` tokenized corpus as stored, text files
    (or a directory of them) tokenized with the preset's vocabulary."""
    from keras_albert.data.documents import read_documents
    from keras_albert.data.pretraining_instances import tokenize_documents
    from keras_albert.data.tokenized_corpus import read_tokenized_corpus

    path = pathlib.Path(path)
    if path.suffix == ".npz":
        return [document.token_ids for document in read_tokenized_corpus(path, vocabulary.size)]
    files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"{str(path)!r} holds no .txt files")
    documents = tokenize_documents(read_documents([str(f) for f in files]), vocabulary.processor,
                                   vocabulary.lowercase)
    return [document.token_ids for document in documents]


def persuasion_paragraphs():
    from keras_albert.datasets.austen import HELD_OUT_NOVEL
    from keras_albert.datasets.austen import load_austen_novel

    return list(load_austen_novel(HELD_OUT_NOVEL))


def eval_documents(args, vocabulary):
    if args.eval_corpus:
        return corpus_documents(args.eval_corpus, vocabulary), args.eval_corpus
    from keras_albert.data.pretraining_instances import tokenize_documents

    documents = tokenize_documents([persuasion_paragraphs()], vocabulary.processor, vocabulary.lowercase)
    return [document.token_ids for document in documents], "bundled Persuasion (one document, a paragraph a line)"


def windows_of(documents, vocabulary, window_length):
    from keras_albert.data.causal_windows import document_stream
    from keras_albert.data.causal_windows import pack_windows

    stream = document_stream(documents, vocabulary.start_id, vocabulary.end_id)
    return pack_windows(stream, window_length), int(stream.size)


def fingerprint(*arrays):
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(array.tobytes())
    return digest.hexdigest()[:16]


def sample_documents(documents, budget, carve_out, seed):
    """(carve-out, training) documents: a seeded order of whole documents,
    the first `carve_out` tokens' worth set aside, the next `budget` tokens'
    worth (0: all the rest) for training; the last one taken is cut to fit."""
    import numpy as np

    carve, training, carve_taken, training_taken = [], [], 0, 0
    for index in np.random.default_rng(seed).permutation(len(documents)):
        document = documents[index]
        if carve_taken < carve_out:
            document = document[: carve_out - carve_taken]
            carve.append(document)
            carve_taken += len(document)
        elif not budget or training_taken < budget:
            document = document[: budget - training_taken] if budget else document
            training.append(document)
            training_taken += len(document)
        else:
            break
    return carve, training


# --- Scoring ---------------------------------------------------------------


def neural_perplexity(model, windows, batch_size):
    from keras_albert.pipelines.causal_pretraining import heldout_loss

    return heldout_loss(model, windows, batch_size)


def kneser_ney_perplexity(model, windows):
    """Loss per token and perplexity over the same targets as the neural
    models, each from the last order - 1 tokens of its window."""
    from kneser_ney import probability

    total, count = 0.0, 0
    for row, length in zip(windows["token_ids"], windows["lengths"]):
        ids = row[:length].tolist()
        for position in range(1, length):
            context = ids[max(0, position - model.order + 1): position]
            total -= math.log(probability(model, ids[position], context))
            count += 1
    loss = total / count
    return {"loss_per_token": loss, "perplexity": math.exp(loss), "tokens": count}


class ClozePassage:
    def __init__(self, text, word, context_ids, word_ids):
        self.text, self.word, self.context_ids, self.word_ids = text, word, context_ids, word_ids


def cloze_passages(paragraphs, vocabulary, window_length, min_context_words, limit=0):
    """The passages that qualify (see the module docstring) and why the
    others were dropped."""
    from collections import Counter

    passages, dropped = [], Counter()
    for paragraph in paragraphs:
        words = list(WORD.finditer(paragraph))
        if len(words) < min_context_words + 1:
            dropped["too few words"] += 1
            continue
        last = words[-1]
        if (not last.group().isalpha() or not paragraph[last.start() - 1].isspace()
                or re.search(r"\w", paragraph[last.end():])):
            dropped["last word not plain"] += 1
            continue
        if last.group().lower() not in {word.group().lower() for word in words[:-1]}:
            dropped["last word not earlier in the paragraph"] += 1
            continue
        full = vocabulary.encode(paragraph)
        prefix = vocabulary.encode(paragraph[: last.start()])
        word_ids = vocabulary.encode(last.group())
        if full[: len(prefix) + len(word_ids)] != prefix + word_ids:
            dropped["word's pieces differ in context"] += 1
            continue
        if len(word_ids) >= window_length:
            dropped["word longer than the window"] += 1
            continue
        context = ([vocabulary.start_id] + prefix)[-(window_length - len(word_ids)):]
        passages.append(ClozePassage(paragraph, last.group(), context, word_ids))
        if limit and len(passages) == limit:
            break
    return passages, dict(dropped)


def neural_cloze(model, passages, continues_word, window_length, batch_size):
    """Per passage: whether greedy decoding gives the word and then ends it.

    One teacher-forced pass gives every greedy step: greedy decoding
    follows the word exactly as long as each next piece is the argmax.
    """
    import keras
    import numpy as np

    results = []
    for start in range(0, len(passages), batch_size):
        batch = passages[start: start + batch_size]
        token_ids = np.zeros((len(batch), window_length), "int32")
        padding_mask = np.zeros((len(batch), window_length), "int32")
        for row, passage in enumerate(batch):
            ids = passage.context_ids + passage.word_ids
            token_ids[row, : len(ids)] = ids
            padding_mask[row, : len(ids)] = 1
        logits = keras.ops.convert_to_numpy(
            model.predict_on_batch({"token_ids": token_ids, "padding_mask": padding_mask}))
        predicted = np.asarray(logits, np.float32).argmax(axis=-1)
        for row, passage in enumerate(batch):
            first = len(passage.context_ids) - 1
            steps = predicted[row, first: first + len(passage.word_ids) + 1]
            results.append(bool(list(steps[:-1]) == passage.word_ids and not continues_word[steps[-1]]))
    return results


def kneser_ney_cloze(model, passages, continues_word):
    from kneser_ney import most_likely

    results = []
    for passage in passages:
        context, correct = list(passage.context_ids), True
        for piece in passage.word_ids:
            if most_likely(model, context) != piece:
                correct = False
                break
            context.append(piece)
        results.append(correct and not continues_word[most_likely(model, context)])
    return results


# --- Models ---------------------------------------------------------------


def load_albert(preset):
    import keras_albert
    from keras_albert.presets.preset_resolution import resolve_preset

    try:
        preset_dir = pathlib.Path(resolve_preset(preset))
        task = (preset_dir / "task.json").read_text() if (preset_dir / "task.json").is_file() else ""
    except (ValueError, OSError) as error:
        raise ValueError(f"--preset {preset!r}: {error}") from None
    if "AlbertCausalLM" not in task:
        raise ValueError(f"--preset {preset!r} is not an AlbertCausalLM preset (its task.json names none)")
    return keras_albert.AlbertCausalLM.from_preset(str(preset_dir), preprocessor=None), preset_dir


def gpt2_parameters(vocabulary_size, positions, layers, hidden, intermediate):
    """keras-hub GPT2CausalLM's weights (tied output embedding)."""
    block = 4 * (hidden * hidden + hidden) + 2 * 2 * hidden + 2 * hidden * intermediate + intermediate + hidden
    return vocabulary_size * hidden + positions * hidden + layers * block + 2 * hidden


def gpt2_shape(albert, args, target):
    """GPT-2 of the preset's depth, heads and positions; the width (an even
    width per head) whose count comes nearest `target`."""
    config = albert.backbone.get_config()
    heads, layers = config["num_heads"], config["num_layers"]
    vocabulary, positions = config["vocabulary_size"], config["max_sequence_length"]
    if args.gpt2_hidden_dim is not None:
        if args.gpt2_hidden_dim % heads:
            raise ValueError(f"--gpt2_hidden_dim {args.gpt2_hidden_dim} must be a multiple of the "
                             f"preset's {heads} heads")
        hidden = args.gpt2_hidden_dim
    else:
        widths = range(2 * heads, 8192 + 1, 2 * heads)
        hidden = min(widths, key=lambda width: abs(
            gpt2_parameters(vocabulary, positions, layers, width, 4 * width) - target))
    return dict(vocabulary_size=vocabulary, num_layers=layers, num_heads=heads, hidden_dim=hidden,
                intermediate_dim=4 * hidden, max_sequence_length=positions, dropout=args.gpt2_dropout)


class _TimeBudget:
    """A Keras callback that stops training once `seconds` have passed."""

    def __new__(cls, seconds):
        import keras

        class TimeBudget(keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.started, self.stopped_early = time.monotonic(), False

            def on_train_batch_end(self, batch, logs=None):
                if seconds and time.monotonic() - self.started > seconds:
                    self.stopped_early = True
                    self.model.stop_training = True

        return TimeBudget()


def train_gpt2(args, shape, windows):
    """Trains GPT-2 for `--train_gpt2_tokens` and saves a float32 preset to
    `--gpt2_output`; returns what the record keeps of the run."""
    import keras
    import keras_hub

    from keras_albert.data.causal_windows import CausalWindowBatches
    from keras_albert.pipelines.causal_pretraining import causal_lm_loss
    from keras_albert.training.precision import configure_precision
    from keras_albert.training.schedules import WarmupLinearDecay
    from keras_albert.utils.atomic_directory import atomic_directory

    tokens_per_step = args.train_batch_size * args.window_length
    steps = max(1, math.ceil(args.train_gpt2_tokens / tokens_per_step))
    keras.utils.set_random_seed(args.seed)
    configure_precision(args.precision)
    try:
        causal_lm = keras_hub.models.GPT2CausalLM(keras_hub.models.GPT2Backbone(**shape), preprocessor=None)
        model = keras.Model(causal_lm.inputs, causal_lm.outputs, name="gpt2_training")
        # The causal pretraining pipeline's AdamW (`--optimizer adamw`).
        schedule = WarmupLinearDecay(peak_learning_rate=args.learning_rate,
                                     warmup_steps=min(3125, steps // 10), total_steps=steps)
        model.compile(optimizer=keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.01,
                                                       global_clipnorm=1.0),
                      loss=causal_lm_loss(), steps_per_execution=args.steps_per_execution)
        batches = CausalWindowBatches(windows, args.train_batch_size, seed=args.seed)
        budget = _TimeBudget(args.time_budget_minutes * 60)
        started = time.monotonic()
        history = model.fit(iter(batches), steps_per_epoch=steps, epochs=1, callbacks=[budget],
                            verbose=1 if sys.stdout.isatty() else 2)
        seconds = time.monotonic() - started
    finally:
        configure_precision("float32")
    released = keras_hub.models.GPT2CausalLM(
        keras_hub.models.GPT2Backbone(**shape, dtype="float32"), preprocessor=None)
    released.set_weights(causal_lm.get_weights())
    # The optimizer's count: exact whatever --steps_per_execution groups.
    trained_steps = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
    record = {
        "steps": trained_steps, "planned_steps": steps, "tokens_per_step": tokens_per_step,
        "tokens": trained_steps * tokens_per_step, "requested_tokens": args.train_gpt2_tokens,
        "stopped_by_time_budget": budget.stopped_early, "seconds": round(seconds, 1),
        "final_training_loss": float(history.history["loss"][-1]),
        "train_corpus": args.train_corpus, "window_length": args.window_length,
        "batch_size": args.train_batch_size, "learning_rate": args.learning_rate, "seed": args.seed,
        "optimizer": "AdamW, weight decay 0.01, global clipnorm 1.0, linear warmup min(3125, steps / 10) "
                     "then linear decay to 0",
        "precision": args.precision, "backend": keras.config.backend(),
    }
    with atomic_directory(pathlib.Path(args.gpt2_output)) as staging:
        released.save_to_preset(str(staging))
        # Travels with the preset, so a later run that reads it records how it was trained.
        (pathlib.Path(staging) / TRAINING_RECORD).write_text(json.dumps(record, indent=2) + "\n")
    return released, {**record, "preset": args.gpt2_output}


def window_contexts(windows, order):
    """The context of every scored token of `windows` (as scored)."""
    for row, length in zip(windows["token_ids"], windows["lengths"]):
        ids = row[:length].tolist()
        for position in range(1, length):
            yield ids[max(0, position - order + 1): position]


def cloze_contexts(passages):
    """Every context a greedy cloze step reads: the passage's context and
    each longer prefix of context + word."""
    for passage in passages:
        ids = passage.context_ids + passage.word_ids
        for count in range(len(passage.context_ids), len(ids) + 1):
            yield ids[:count]


def fit_kneser_ney(args, vocabulary, documents, eval_windows, passages):
    """Counts the sampled training documents, picks the discount on the
    carve-out, then counts the carve-out too; returns (model, record)."""
    import itertools
    import resource

    from kneser_ney import add_text
    from kneser_ney import needed_contexts
    from kneser_ney import new_model
    from kneser_ney import with_discount

    from keras_albert.data.causal_windows import document_stream

    carve_out, training = sample_documents(documents, args.kn_train_tokens, args.kn_carve_out_tokens, args.seed)
    if not training or not carve_out:
        raise ValueError(f"--train_corpus {args.train_corpus!r} is too small for a carve-out of "
                         f"{args.kn_carve_out_tokens} tokens and training text beside it")
    started = time.monotonic()
    carve_out_windows, _ = windows_of(carve_out, vocabulary, args.window_length)
    needed = None if args.kn_count_all else needed_contexts(itertools.chain(
        window_contexts(eval_windows, args.kn_order), window_contexts(carve_out_windows, args.kn_order),
        cloze_contexts(passages)), args.kn_order)
    training_stream = document_stream(training, vocabulary.start_id, vocabulary.end_id)
    model = new_model(args.kn_order, args.kn_discounts[0], vocabulary.size, max_ngrams=args.kn_max_ngrams)
    try:
        add_text(model, training_stream.tolist(), needed)
    except ValueError as error:  # NLTK's bound on distinct n-grams
        raise ValueError(f"--kn_max_ngrams {args.kn_max_ngrams}: {error}") from None
    model.estimator.build_index()
    count_seconds = time.monotonic() - started
    carve_out_perplexity = {}
    for discount in args.kn_discounts:
        carve_out_perplexity[discount] = kneser_ney_perplexity(
            with_discount(model, discount), carve_out_windows)["perplexity"]
        print(f"kneser_ney: discount {discount}: carve-out perplexity {carve_out_perplexity[discount]:.2f}",
              flush=True)
    chosen = min(carve_out_perplexity, key=carve_out_perplexity.get)
    carve_out_stream = document_stream(carve_out, vocabulary.start_id, vocabulary.end_id)
    add_text(model, carve_out_stream.tolist(), needed)
    model = with_discount(model, chosen)  # indexes the counts again
    return model, {
        "library": "nltk.lm.KneserNeyInterpolated with benchmarks/kneser_ney.IndexedKneserNey "
                   "(indexed continuation counts; unigram level discounted into a uniform floor; "
                   "contexts with no continuation back off)",
        "order": args.kn_order,
        "training_tokens": int(training_stream.size + carve_out_stream.size),
        "training_documents": len(training) + len(carve_out),
        "corpus_tokens": int(sum(len(document) for document in documents)),
        "token_budget": args.kn_train_tokens or "all",
        "sample": "whole documents in a seeded order (--seed), the last one cut to the budget",
        "carve_out_tokens": int(carve_out_stream.size),
        "carve_out_perplexity_by_discount": {str(key): round(value, 3) for key, value in carve_out_perplexity.items()},
        "discount": chosen,
        "ngrams_counted": "all" if needed is None else (
            f"those that probabilities after the {len(needed):,} contexts scored here (Persuasion's, the "
            "carve-out's, the cloze's) read: exactly the full count's probabilities, in less memory "
            "(benchmarks/kneser_ney.add_text)"),
        "count_seconds": round(count_seconds, 1),
        "peak_memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


# --- The run --------------------------------------------------------------


def run(args):
    import keras
    import numpy as np
    from intervals import points_with_interval
    from intervals import wilson_interval

    keras.utils.set_random_seed(args.seed)
    albert, preset_dir = load_albert(args.preset)
    vocabulary = Vocabulary(preset_dir)
    if vocabulary.size != albert.backbone.vocabulary_size:
        raise ValueError(f"--preset {args.preset!r}: its vocabulary has {vocabulary.size} pieces, "
                         f"its backbone {albert.backbone.vocabulary_size}")
    positions = albert.backbone.max_sequence_length
    args.window_length = args.window_length or positions
    if args.window_length > positions:
        raise ValueError(f"--window_length {args.window_length} exceeds the preset's {positions} positions")

    documents, eval_source = eval_documents(args, vocabulary)
    windows, eval_tokens = windows_of(documents, vocabulary, args.window_length)
    paragraphs = (pathlib.Path(args.cloze_text).read_text(encoding="utf-8").splitlines()
                  if args.cloze_text else persuasion_paragraphs())
    passages, dropped = cloze_passages(paragraphs, vocabulary, args.window_length,
                                       args.cloze_min_context_words, args.max_cloze_passages)
    if not passages:
        raise ValueError(f"no cloze passage qualifies in {args.cloze_text or 'Persuasion'} "
                         f"(dropped: {dropped})")
    print(f"eval: {eval_tokens:,} tokens in {len(windows['lengths'])} windows of {args.window_length}; "
          f"cloze: {len(passages)} passages", flush=True)
    continues_word = vocabulary.continues_word()
    training_documents = (corpus_documents(args.train_corpus, vocabulary)
                          if "kneser_ney" in args.models or args.train_gpt2_tokens else None)

    rows, cloze_hits = {}, {}
    albert_parameters = int(albert.count_params())
    for name in args.models:
        started = time.monotonic()
        if name == "albert":
            row = {"preset": args.preset, "parameters": albert_parameters,
                   "backbone_parameters": int(albert.backbone.count_params())}
            model = albert
        elif name == "kneser_ney":
            model, row = fit_kneser_ney(args, vocabulary, training_documents, windows, passages)
        else:
            shape = gpt2_shape(albert, args, albert_parameters)
            if args.train_gpt2_tokens:
                train_windows, _ = windows_of(training_documents, vocabulary, args.window_length)
                model, training = train_gpt2(args, shape, train_windows)
                row = {"training": training}
            else:
                import keras_hub

                model = keras_hub.models.GPT2CausalLM.from_preset(args.gpt2_preset, preprocessor=None)
                row = {"preset": args.gpt2_preset}
                trained = pathlib.Path(args.gpt2_preset) / TRAINING_RECORD
                if trained.is_file():
                    row["training"] = json.loads(trained.read_text())
                shape = {key: model.backbone.get_config()[key] for key in shape}
            row.update(shape=shape, parameters=int(model.count_params()),
                       parameters_of_preset=albert_parameters)
            if model.backbone.vocabulary_size != vocabulary.size:
                raise ValueError(f"--gpt2_preset has a {model.backbone.vocabulary_size}-piece vocabulary; "
                                 f"the preset's has {vocabulary.size}")
        if name == "kneser_ney":
            perplexity = kneser_ney_perplexity(model, windows)
            hits = kneser_ney_cloze(model, passages, continues_word)
        else:
            perplexity = neural_perplexity(model, windows, args.batch_size)
            hits = neural_cloze(model, passages, continues_word, args.window_length, args.batch_size)
        cloze_hits[name] = hits
        correct = sum(hits)
        low, high = wilson_interval(correct, len(hits))
        row.update(
            loss_per_token=round(perplexity["loss_per_token"], 5), perplexity=round(perplexity["perplexity"], 3),
            tokens_scored=perplexity["tokens"],
            cloze={"n": len(hits), "correct": correct, "accuracy": round(correct / len(hits), 4),
                   "wilson_95": [round(low, 4), round(high, 4)]},
            seconds=round(time.monotonic() - started, 1))
        rows[name] = row
        print(f"{name:>10}: perplexity {perplexity['perplexity']:.2f} over {perplexity['tokens']:,} tokens; "
              f"cloze {correct}/{len(hits)} [{low:.3f}, {high:.3f}]", flush=True)

    differences = {}
    if "albert" in cloze_hits:
        for name in cloze_hits:
            if name != "albert":
                n = len(passages)
                differences[f"albert_minus_{name}"] = points_with_interval(
                    sum(cloze_hits["albert"]) / n, n, sum(cloze_hits[name]) / n, n)
    context_lengths = [len(passage.context_ids) for passage in passages]
    write_result(args.output, {
        "backend": keras.config.backend(),
        "settings": {key: value for key, value in vars(args).items() if key != "output"},
        "vocabulary_size": vocabulary.size,
        "uniform_perplexity": vocabulary.size,
        "perplexity_eval": {
            "corpus": eval_source, "tokens_in_stream": eval_tokens, "windows": int(len(windows["lengths"])),
            "window_length": args.window_length,
            "windows_sha256_16": fingerprint(windows["token_ids"], windows["lengths"]),
            "unit": "nats per SentencePiece token of the preset's vocabulary; perplexity = exp",
        },
        "cloze": {
            "source": args.cloze_text or "bundled Persuasion paragraphs",
            "passages": len(passages), "dropped": dropped,
            "selection": "last word of a paragraph: all letters, after a space, followed only by punctuation, "
                         "also earlier in the paragraph (case-insensitive), at least "
                         f"{args.cloze_min_context_words} words before it",
            "scoring": "greedy: every piece of the word the argmax given [CLS] + the paragraph before it "
                       "(cut from the left to the window), then a piece that does not continue the word",
            "context_pieces": {"median": float(np.median(context_lengths)), "max": max(context_lengths)},
            "passages_sha256_16": hashlib.sha256(repr(
                [(p.context_ids, p.word_ids) for p in passages]).encode()).hexdigest()[:16],
            "examples": [{"end_of_context": p.text[: p.text.rfind(p.word)][-100:], "word": p.word}
                         for p in passages[:5]],
        },
        "models": rows,
        "cloze_differences_points": differences,
    })


def main(argv=None):
    args = parse_args(argv)
    try:
        run(args)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
