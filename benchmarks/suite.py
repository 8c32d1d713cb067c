"""Speed where users feel it: keras_albert vs keras-hub and Hugging Face, one run.

    python benchmarks/suite.py [--quick] [--rounds 3] [--threads N] [--output FILE]

Every row is our figure, the peer's figure from the same run and the ratio
(ours / peer for throughput: >= 1.0 means we are faster). Each row is timed
over `--rounds` (default 3) interleaved rounds; the table prints the median
and the spread (min-max) of each side, and the ratio is the median of the
per-round ratios. The result goes to `benchmarks/results/suite.json` (or
`--output`) with the command, the date and the machine's cores.

Threads: TensorFlow's intra-op pool and PyTorch's `torch.set_num_threads`
are both set to `--threads` (default: every core, `os.cpu_count()`, which is
PyTorch's own default and its fastest setting here); the JSON records both.

(a) Serving throughput, texts/s, on real-length text: WordNet glosses and
    Austen sentences from the bundled data, in random order, batch 32.
    Ours: `AlbertClassifier.predict` (length-bucketed) and the serving
    SavedModel (raw strings in, bucketed inside the graph). Peers:
    keras-hub's `AlbertTextClassifier.predict` (XLA on or off, whichever
    was faster for it in this run; its preprocessor pads every text to
    `--length`, 128, keras-hub's only mode), "keras-hub bucketed": the same
    model given our buckets by hand (each bucket's texts predicted with its
    preprocessor's `sequence_length` set to the bucket's length: the padding
    ours gets, at the price of one call per bucket) and Hugging Face PyTorch
    `AlbertForSequenceClassification` (`torch.inference_mode`, fast
    tokenizer included in the time) with dynamic padding
    (`padding=True`: each batch padded to its longest text), measured two
    ways: batches in the texts' order ("HF PyTorch") and batches of
    length-sorted texts ("HF PyTorch sorted", outputs put back in order;
    the sort is timed too), the closest match to our buckets. All carry
    the same weights; the max logit difference to keras-hub is printed
    (must be <= 1e-4).
(b) Training throughput, examples/s: `fit` on the same real texts (random
    labels), batch 32, Adam; ours feeds `bucketed_dataset` (full batches
    only) with its default `jit_compile` (off on CPU), keras-hub its
    raw-string `fit` with XLA on and off (the faster makes the row; forced
    XLA was slower for its training in `backbone_speed.py`), and keras-hub
    bucketed (one `fit` per bucket, padded to the bucket's length).
    Compilation is warmed up first and not timed; then `--rounds`
    interleaved epochs each.
(c) Backbone forward FLOP/s (analytic FLOPs / median of the interleaved
    repeats, batch 8 x 128, no padding; each side with XLA on or off,
    whichever is faster for it) as a share of the CPU's fp32 peak (2 cores
    x AVX2 FMA ~157 GFLOP/s), ours vs keras-hub's AlbertBackbone with the
    same weights.

Models have random weights (speed and parity do not depend on training)
and ALBERT-base's shape (hidden 768, 12 heads, FFN 3072, embedding 128,
one shared block, so base's parameters; `--width` shrinks them for a smoke
run), run for `--layers` layers in (a)
and (b) so the suite fits its 10-minute budget on 2 shared cores, and for
`--flops_layers` in (c) (12 = ALBERT-base depth). The vocabulary is the bundled
`albert_tiny_en` SentencePiece model (8,000 pieces); texts are normalised
(lowercase, accents stripped) before all three tokenizers so that they
produce the same ids.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.convert.huggingface import export_huggingface  # noqa: E402
from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights  # noqa: E402
from keras_albert.convert.tf1_names import set_backbone_weights  # noqa: E402
from keras_albert.data.length_bucketed_batches import bucketed_dataset  # noqa: E402
from keras_albert.export import export_serving_saved_model  # noqa: E402
from keras_albert.models.length_buckets import bucket_lengths  # noqa: E402
from keras_albert.utils.text_normalization import normalize_text  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import check_rounds  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402

PEAK_GFLOPS = 157.0  # 2 cores x 2 FMA units x 8 fp32 lanes x 2 flops x ~2.45 GHz
NUM_CLASSES = 4


def real_texts(count, split, seed):
    """Half WordNet glosses, half Austen sentences, shuffled, normalised."""
    glosses, _ = datasets.load_supersense(split)
    sentences = [s for document in datasets.load_austen_documents(sentences=True) for s in document]
    rng = random.Random(seed)
    texts = rng.sample(glosses, count // 2) + rng.sample(sentences, count - count // 2)
    rng.shuffle(texts)
    return [normalize_text(text) for text in texts]


def backbone_config(layers, vocabulary_size, width=768):
    """ALBERT-base's shape at `width` (768: base; heads of 64, FFN 4x)."""
    return dict(
        vocabulary_size=vocabulary_size, num_layers=layers, num_heads=max(1, width // 64), embedding_dim=128,
        hidden_dim=width, intermediate_dim=4 * width, max_sequence_length=512, dropout=0.0,
    )


def twin_backbones(layers, vocabulary_size, width=768):
    """keras-hub's and our backbone with the same (random) weights."""
    config = backbone_config(layers, vocabulary_size, width)
    theirs = keras_hub.models.AlbertBackbone(**config)
    ours = keras_albert.AlbertBackbone(**config)
    set_backbone_weights(ours, keras_hub_backbone_weights(theirs))
    return ours, theirs


def forward_flops(batch, length, layers, embedding=128, hidden=768, intermediate=3072):
    """Multiply-adds x 2 of the backbone's forward pass."""
    tokens = batch * length
    per_layer = (
        8 * tokens * hidden * hidden  # Q, K, V and output projections
        + 4 * batch * length * length * hidden  # scores and weighted values
        + 4 * tokens * hidden * intermediate  # feed-forward
    )
    return 2 * tokens * embedding * hidden + layers * per_layer + 2 * batch * hidden * hidden


def seconds(function):
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


class Table:
    """Rows of (what, ours per round, peer per round, unit, per-round ratios)."""

    def __init__(self):
        self.rows = []

    def add(self, what, ours, peer, unit, ratios):
        row = {"what": what, "unit": unit, "ours": spread(ours), "peer": spread(peer),
               "ratio": spread(ratios)}
        self.rows.append(row)
        print(f"  {what}: ours {row['ours']['median']:.2f} {unit}, peer {row['peer']['median']:.2f} {unit}, "
              f"ratio {row['ratio']['median']:.2f}x", flush=True)

    def print(self):
        width = max(len(row["what"]) for row in self.rows)

        def cell(s):
            return f"{s['median']:.2f} [{s['min']:.2f}-{s['max']:.2f}]"

        print("\nmedian [min-max] over rounds; ratio: median of the per-round ratios [min-max]")
        print(f"{'measurement':<{width}}  {'ours':>22}  {'peer':>22}  {'unit':<11}{'ratio':>20}")
        # Ordered by their "(a)"/"(b)"/"(c)" labels, whatever order they ran in.
        for row in sorted(self.rows, key=lambda row: row["what"][:3]):
            print(f"{row['what']:<{width}}  {cell(row['ours']):>22}  {cell(row['peer']):>22}  "
                  f"{row['unit']:<11}{cell(row['ratio']):>19}x")
        print(f"minimum ratio: {min(row['ratio']['median'] for row in self.rows):.2f}x "
              "(target: every ratio >= 1.0)")


def bucket_groups(lengths, shapes):
    """{bucket length: indices of the texts ours runs at that length}."""
    buckets = np.asarray(shapes)[np.searchsorted(shapes, lengths)]
    return {int(shape): np.flatnonzero(buckets == shape) for shape in shapes if (buckets == shape).any()}


def at_bucket_lengths(theirs, groups, run):
    """`run(length, indices)` for every bucket with keras-hub's preprocessor
    padding to that bucket's length; the preprocessor's length is restored."""
    padded = theirs.preprocessor.sequence_length
    try:
        results = []
        for length, indices in groups.items():
            theirs.preprocessor.sequence_length = length
            results.append((indices, run(length, indices)))
        return results
    finally:
        theirs.preprocessor.sequence_length = padded


def keras_hub_twin(theirs, jit, optimizer=None):
    """A copy of keras-hub's classifier (same weights and preprocessor)
    compiled with `jit_compile=jit`: one compiled model per setting, since
    recompiling one model would retrace it inside the timed calls."""
    backbone = keras_hub.models.AlbertBackbone.from_config(theirs.backbone.get_config())
    backbone.set_weights(theirs.backbone.get_weights())
    model = keras_hub.models.AlbertTextClassifier(backbone, num_classes=NUM_CLASSES,
                                                  preprocessor=theirs.preprocessor)
    model.output_dense.set_weights(theirs.output_dense.get_weights())
    model.compile(optimizer=optimizer or "auto", jit_compile=jit)
    return model


def faster_setting(times):
    """The jit_compile setting of `times` ({jit: [seconds]}) with the
    smaller median."""
    return min(times, key=lambda jit: statistics.median(times[jit]))


def hugging_face_classifier(ours, proto, directory):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    export_huggingface(ours.backbone, directory, vocabulary=proto)
    model = transformers.AlbertForSequenceClassification.from_pretrained(directory, num_labels=NUM_CLASSES)
    kernel, bias = ours.output_dense.get_weights()
    with torch.no_grad():
        model.classifier.weight.copy_(torch.from_numpy(kernel.T.copy()))
        model.classifier.bias.copy_(torch.from_numpy(bias))
    # From the exported directory (tokenizer_config.json): its ids equal ours.
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    return model.eval(), tokenizer


def serving_throughput(args, table, ours, theirs, proto, work):
    import torch

    texts = real_texts(args.texts, "test", seed=1)
    lengths = np.asarray(ours.preprocessor(texts)["padding_mask"]).sum(-1)
    shapes = bucket_lengths(args.length)
    histogram = np.bincount(np.searchsorted(shapes, lengths), minlength=len(shapes))
    print(f"(a) {len(texts)} texts: {np.mean(lengths):.1f} pieces on average (with [CLS]/[SEP]), "
          f"max {lengths.max()}; per bucket {dict(zip(shapes, histogram.tolist()))}", flush=True)

    hf_model, hf_tokenizer = hugging_face_classifier(ours, proto, str(work / "hf"))
    export_serving_saved_model(ours, work / "serving", check_texts=texts[:32])
    serve = tf.saved_model.load(str(work / "serving")).signatures["serving_default"]
    batches = [texts[i : i + args.batch] for i in range(0, len(texts), args.batch)]

    def hf_predict(batch_texts=None, sort=False):
        """Dynamic padding (`padding=True`); `sort`: length-sorted batches."""
        if batch_texts is not None:
            chosen = [batch_texts]
        elif sort:
            encoded = hf_tokenizer(texts, truncation=True, max_length=args.length)
            order = np.argsort([len(ids) for ids in encoded["input_ids"]], kind="stable")
            outputs = np.empty((len(texts), NUM_CLASSES), "float32")
            for start in range(0, len(texts), args.batch):
                rows = order[start : start + args.batch]
                batch = hf_tokenizer.pad({key: [values[i] for i in rows] for key, values in encoded.items()},
                                         padding=True, return_tensors="pt")
                with torch.inference_mode():
                    outputs[rows] = hf_model(**batch).logits.numpy()
            return outputs
        else:
            chosen = batches
        outputs = []
        for batch in chosen:
            encoded = hf_tokenizer(batch, padding=True, truncation=True, max_length=args.length,
                                   return_tensors="pt")
            with torch.inference_mode():
                outputs.append(hf_model(**encoded).logits.numpy())
        return np.concatenate(outputs)

    groups = bucket_groups(lengths, shapes)
    twins = {jit: keras_hub_twin(theirs, jit) for jit in (True, False)}

    def keras_hub_predict(jit, bucketed=False):
        model = twins[jit]
        if not bucketed:
            return model.predict(texts, batch_size=args.batch, verbose=0)
        outputs = np.empty((len(texts), NUM_CLASSES), "float32")
        for indices, logits in at_bucket_lengths(model, groups, lambda length, indices: model.predict(
                [texts[i] for i in indices], batch_size=args.batch, verbose=0)):
            outputs[indices] = logits
        return outputs

    systems = {
        "ours predict": lambda: ours.predict(texts, batch_size=args.batch, verbose=0),
        "ours SavedModel": lambda: np.concatenate([serve(text=tf.constant(b))["logits"].numpy() for b in batches]),
        "keras-hub predict XLA on": lambda: keras_hub_predict(True),
        "keras-hub predict XLA off": lambda: keras_hub_predict(False),
        "keras-hub bucketed XLA on": lambda: keras_hub_predict(True, bucketed=True),
        "keras-hub bucketed XLA off": lambda: keras_hub_predict(False, bucketed=True),
        "HF PyTorch": hf_predict,
        "HF PyTorch sorted": lambda: hf_predict(sort=True),
    }
    # Warm-up (tracing, XLA compilation of every shape): every system on all
    # texts (all shapes), Hugging Face (eager) both ways.
    outputs = {name: function() for name, function in systems.items()}
    ids_ours = ours.preprocessor(texts)["token_ids"].numpy()
    ids_hf = hf_tokenizer(texts, padding="max_length", truncation=True, max_length=args.length)["input_ids"]
    print(f"    token ids differing from ours: Hugging Face {int((ids_ours != np.asarray(ids_hf)).any(-1).sum())} "
          f"of {len(texts)} texts", flush=True)
    padded = {"in order": [], "sorted": []}
    sorted_lengths = np.sort(lengths)
    for start in range(0, len(texts), args.batch):
        padded["in order"].append(lengths[start : start + args.batch].max() * len(lengths[start : start + args.batch]))
        padded["sorted"].append(sorted_lengths[start : start + args.batch].max()
                                * len(sorted_lengths[start : start + args.batch]))
    print(f"    Hugging Face dynamic padding: {sum(padded['in order']) / len(texts):.1f} positions per text "
          f"in order, {sum(padded['sorted']) / len(texts):.1f} length-sorted (keras-hub: {args.length})",
          flush=True)

    times = {name: [] for name in systems}
    for _ in range(args.rounds):  # interleaved, so background load hits all alike
        for name, function in systems.items():
            started = time.perf_counter()
            outputs[name] = function()
            times[name].append(time.perf_counter() - started)
    # keras-hub with whichever XLA setting was faster for it in this run.
    xla = {}
    for peer in ("keras-hub predict", "keras-hub bucketed"):
        jit = faster_setting({True: times[f"{peer} XLA on"], False: times[f"{peer} XLA off"]})
        xla[peer] = jit
        times[peer] = times[f"{peer} XLA {'on' if jit else 'off'}"]
        outputs[peer] = outputs[f"{peer} XLA {'on' if jit else 'off'}"]
        print(f"    {peer}: XLA {'on' if jit else 'off'} was faster for it "
              f"({statistics.median(times[peer + ' XLA on']):.2f} s on, "
              f"{statistics.median(times[peer + ' XLA off']):.2f} s off)", flush=True)
    rates = {name: [len(texts) / value for value in values] for name, values in times.items()}
    reference = outputs["keras-hub predict"]
    differences = {}
    for name in ("ours predict", "ours SavedModel", "keras-hub bucketed", "HF PyTorch", "HF PyTorch sorted"):
        differences[name] = float(np.abs(outputs[name] - reference).max())
        print(f"    max |{name} - keras-hub| logits: {differences[name]:.2e}")
    worst = max(differences.values())
    print(f"    identical within 1e-4: {'yes' if worst <= 1e-4 else 'NO'}; torch threads "
          f"{torch.get_num_threads()}", flush=True)
    for ours_name in ("ours predict", "ours SavedModel"):
        for peer in ("keras-hub predict", "keras-hub bucketed", "HF PyTorch", "HF PyTorch sorted"):
            table.add(f"(a) serving {ours_name} vs {peer}", rates[ours_name], rates[peer], "texts/s",
                      [a / b for a, b in zip(rates[ours_name], rates[peer])])
    return {"texts": len(texts), "mean_pieces": float(np.mean(lengths)), "max_logit_difference": differences,
            "keras_hub_jit_compile": xla,
            "keras_hub_seconds": {name: spread(values) for name, values in times.items()
                                  if name.startswith("keras-hub") and "XLA" in name},
            "torch_threads": torch.get_num_threads(),
            "hf_padded_positions_per_text": {k: float(sum(v) / len(texts)) for k, v in padded.items()}}


def training_throughput(args, table, ours, theirs):
    texts = real_texts(args.train_examples, "train", seed=2)
    labels = np.random.default_rng(0).integers(0, NUM_CLASSES, len(texts)).astype("int32")
    ours.compile(optimizer=keras.optimizers.Adam(1e-5))  # jit_compile: the measured default
    dataset = bucketed_dataset(ours.preprocessor, texts, labels, batch_size=args.batch, seed=0)
    steps = int(dataset.cardinality())
    lengths = np.asarray(ours.preprocessor(texts)["padding_mask"]).sum(-1)
    groups = bucket_groups(lengths, bucket_lengths(args.length))
    copies = {jit: keras_hub_twin(theirs, jit, keras.optimizers.Adam(1e-5)) for jit in (True, False)}

    def keras_hub_epoch(model, bucketed):
        if not bucketed:
            return model.fit(texts, labels, batch_size=args.batch, epochs=1, verbose=0)
        return at_bucket_lengths(model, groups, lambda length, indices: model.fit(
            [texts[i] for i in indices], labels[indices], batch_size=args.batch, epochs=1, verbose=0))

    peers = {f"keras-hub{' bucketed' if bucketed else ''} XLA {'on' if jit else 'off'}":
             (lambda model=model, bucketed=bucketed: keras_hub_epoch(model, bucketed))
             for jit, model in copies.items() for bucketed in (False, True)}
    # Warm-up (XLA compiles every shape): one epoch each (the shapes are the
    # same every epoch).
    seconds(lambda: ours.fit(dataset, epochs=1, verbose=0))
    for epoch in peers.values():
        epoch()
    ours_times, times = [], {name: [] for name in peers}
    for _ in range(args.rounds):  # interleaved epochs
        ours_times.append(seconds(lambda: ours.fit(dataset, epochs=1, verbose=0)))
        for name, epoch in peers.items():
            times[name].append(seconds(epoch))
    print(f"(b) {len(texts)} texts: {steps} bucketed batches (up to {args.batch}) for ours, "
          f"{-(-len(texts) // args.batch)} batches padded to {args.length} for keras-hub "
          f"(bucketed: {len(groups)} fits a round)", flush=True)
    ours_rates = [len(texts) / value for value in ours_times]
    xla = {}
    for peer, label in (("keras-hub", "fit"), ("keras-hub bucketed", "bucketed fit")):
        jit = faster_setting({True: times[f"{peer} XLA on"], False: times[f"{peer} XLA off"]})
        xla[peer] = jit
        theirs_rates = [len(texts) / value for value in times[f"{peer} XLA {'on' if jit else 'off'}"]]
        print(f"    {peer}: XLA {'on' if jit else 'off'} was faster for it", flush=True)
        table.add(f"(b) training fit vs keras-hub {label}", ours_rates, theirs_rates, "examples/s",
                  [a / b for a, b in zip(ours_rates, theirs_rates)])
    return {"examples": len(texts), "ours_batches": steps, "keras_hub_jit_compile": xla,
            "keras_hub_seconds": {name: spread(values) for name, values in times.items()}}


def forward_efficiency(args, table, vocabulary_size):
    ours, theirs = twin_backbones(args.flops_layers, vocabulary_size, args.width)
    rng = np.random.default_rng(0)
    batch, length = 8, args.length
    x = {
        "token_ids": tf.constant(rng.integers(5, vocabulary_size, (batch, length)), "int32"),
        "segment_ids": tf.zeros((batch, length), "int32"),
        "padding_mask": tf.ones((batch, length), "int32"),
    }
    functions = {
        (name, jit): tf.function(lambda x, m=model: m(x, training=False)["sequence_output"], jit_compile=jit)
        for name, model in (("ours", ours), ("theirs", theirs))
        for jit in (False, True)
    }
    difference = np.abs(functions["ours", False](x).numpy() - functions["theirs", False](x).numpy()).max()
    for function in functions.values():
        function(x)  # trace and compile
    times = {key: [] for key in functions}
    for _ in range(args.flops_repeats):  # interleaved; the median counts
        for key, function in functions.items():
            times[key].append(seconds(lambda f=function: f(x).numpy()))
    flops = forward_flops(batch, length, args.flops_layers, hidden=args.width, intermediate=4 * args.width)
    each = {key: flops / statistics.median(values) / 1e9 for key, values in times.items()}
    # Each side with its faster setting (XLA or not).
    rate = {name: max(each[name, False], each[name, True]) for name in ("ours", "theirs")}
    print(f"(c) {args.flops_layers} layers, batch {batch} x {length}: {flops / 1e9:.1f} GFLOP per pass; "
          f"max |ours - keras-hub| {difference:.1e}; GFLOP/s XLA off/on: ours {each['ours', False]:.1f}/"
          f"{each['ours', True]:.1f}, keras-hub {each['theirs', False]:.1f}/{each['theirs', True]:.1f}; "
          f"best: ours {rate['ours'] / PEAK_GFLOPS:.0%} of peak, keras-hub {rate['theirs'] / PEAK_GFLOPS:.0%}",
          flush=True)
    best = {name: (name, each[name, True] >= each[name, False]) for name in ("ours", "theirs")}
    ours_rates = [flops / t / 1e9 for t in times[best["ours"]]]
    theirs_rates = [flops / t / 1e9 for t in times[best["theirs"]]]
    table.add(f"(c) backbone forward GFLOP/s (peak {PEAK_GFLOPS:.0f})", ours_rates, theirs_rates, "GFLOP/s",
              [a / b for a, b in zip(ours_rates, theirs_rates)])
    return {"gflop_per_pass": flops / 1e9, "max_difference": float(difference),
            "xla": {name: jit for name, (_, jit) in best.items()},
            "gflops_per_second_by_xla": {f"{'ours' if name == 'ours' else 'keras-hub'} XLA {'on' if jit else 'off'}":
                                         value for (name, jit), value in each.items()},
            "share_of_peak": {name: rate[name] / PEAK_GFLOPS for name in rate}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer texts and layers: a smoke run")
    parser.add_argument("--layers", type=int, default=None, help="layers in (a) and (b) (default 4; quick 2)")
    parser.add_argument("--texts", type=int, default=None, help="serving texts (default 192; quick 64)")
    parser.add_argument("--train_examples", type=int, default=None, help="(default 96; quick 64)")
    parser.add_argument("--flops_layers", type=int, default=None, help="layers in (c) (default 4; quick 2)")
    parser.add_argument("--flops_repeats", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds in (a) and (b) (>= 3)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="TF intra-op and torch threads (default: every core)")
    parser.add_argument("--output", default="suite.json", help="under benchmarks/results/ unless a path")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128, help="the peers' padded length")
    parser.add_argument("--width", type=int, default=768,
                        help="hidden size (768: ALBERT-base; heads of 64, FFN 4x); smaller for a smoke run")
    args = parser.parse_args()
    defaults = dict(layers=(2, 4), texts=(64, 192), train_examples=(64, 96), flops_layers=(2, 4))
    for name, (quick, full) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)

    check_rounds(args.rounds)
    check_rounds(args.flops_repeats, "--flops_repeats")
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    import torch

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    proto = tokenizer.proto
    vocabulary_size = tokenizer.vocabulary_size()
    ours_backbone, theirs_backbone = twin_backbones(args.layers, vocabulary_size, args.width)
    ours = keras_albert.AlbertClassifier(
        ours_backbone, num_classes=NUM_CLASSES,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=args.length),
    )
    theirs = keras_hub.models.AlbertTextClassifier(
        theirs_backbone, num_classes=NUM_CLASSES,
        preprocessor=keras_hub.models.AlbertTextClassifierPreprocessor(
            keras_hub.tokenizers.AlbertTokenizer(proto=proto), sequence_length=args.length
        ),
    )
    theirs.output_dense.set_weights(ours.output_dense.get_weights())
    print(f"ALBERT-base shape (width {args.width}), {args.layers} layers in (a)/(b), {args.flops_layers} in (c); random weights; "
          f"vocabulary {vocabulary_size}; batch {args.batch}; keras-hub pads to {args.length}, Hugging Face "
          f"to each batch's longest (padding=True), ours buckets "
          f"{bucket_lengths(args.length)}; TF intra-op threads "
          f"{tf.config.threading.get_intra_op_parallelism_threads()}, torch threads {torch.get_num_threads()}; "
          f"{args.rounds} rounds", flush=True)
    table = Table()
    # (c) first: it is the most sensitive to what earlier rows leave running
    # (PyTorch's spinning OpenMP threads, tf.data workers).
    details = {"(c)": forward_efficiency(args, table, vocabulary_size)}
    with tempfile.TemporaryDirectory(prefix="suite_") as work:
        import pathlib

        details["(a)"] = serving_throughput(args, table, ours, theirs, proto, pathlib.Path(work))
    details["(b)"] = training_throughput(args, table, ours, theirs)
    table.print()
    took = time.perf_counter() - started
    print(f"suite took {took:.0f} s")
    write_result(args.output, {
        "settings": {key: value for key, value in vars(args).items()},
        "threads": {"tensorflow_intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
                    "torch": torch.get_num_threads()},
        "hf_padding": "dynamic (padding=True); 'HF PyTorch' in the texts' order, 'HF PyTorch sorted' length-sorted",
        "rows": {row["what"]: row for row in table.rows},
        "details": details,
        "seconds": took,
    })


if __name__ == "__main__":
    main()
