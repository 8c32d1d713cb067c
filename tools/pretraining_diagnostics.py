"""Is a pretrained preset using word order? Three measurements for issue 17.

A masked-LM stuck near 15 % accuracy can be a "bag of context" model: its
attention spreads over the whole text and its predictions ignore where
the mask is. This prints, for a preset:

- per virtual layer and head, the attention entropy beside the uniform
  entropy log(n), and the mean weight on the previous / next token
  (a model that reads order grows heads that look at neighbours);
- the mean cosine between adjacent position embeddings (learned positions
  become smooth; at initialisation it is about 0);
- on a held-out pretraining TFRecord: the share of sentence-order label 1,
  the accuracy of always answering the majority label, which is the bar
  the SOP accuracy has to clear;
- with `--fresh_pairs FILE...`: masked-LM and SOP accuracy on pairs newly
  drawn from each text file (another seed than any run's). A run's
  training SOP accuracy is on the fixed pairs it was built with and
  repeats; on fresh pairs of its own training text it shows whether the
  head learned sentence order or memorised those pairs.

Usage:
    python tools/pretraining_diagnostics.py --preset albert_tiny_en \\
        --heldout runs/albert_tiny_en_v3/data/eval.tfrecord \\
        --fresh_pairs runs/corpus/austen.txt runs/corpus/persuasion.txt
"""

import argparse
import itertools
import json
import pathlib
import sys
import tempfile

import numpy as np

import keras_albert
from keras_albert.data.documents import read_documents
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.pretraining_tfrecords import pretraining_dataset
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords
from keras_albert.models.albert_pretrainer import pretraining_batch

# No run's data is built with this seed (`pretrain` uses --seed and seed + 1).
FRESH_PAIRS_SEED = 999

# Emma's first sentences: any English text of about 60 pieces works.
PROBE_TEXT = (
    "emma woodhouse, handsome, clever, and rich, with a comfortable home and "
    "happy disposition, seemed to unite some of the best blessings of "
    "existence; and had lived nearly twenty-one years in the world with very "
    "little to distress or vex her."
)


def attention_report(backbone, tokenizer, text=PROBE_TEXT):
    token_ids = np.asarray(tokenizer(text), "int32")
    ids = np.concatenate([[tokenizer.cls_token_id], token_ids, [tokenizer.sep_token_id]])
    n = ids.size
    batch = ids[None, :].astype("int32")
    outputs = backbone.distillation_outputs({
        "token_ids": batch,
        "segment_ids": np.zeros_like(batch),
        "padding_mask": np.ones_like(batch),
    })
    rows = []
    for layer, probabilities in enumerate(outputs["attention_probabilities"]):
        probabilities = np.asarray(probabilities)[0]
        for head, p in enumerate(probabilities):
            rows.append({
                "layer": layer,
                "head": head,
                "entropy": float(-(p * np.log(p + 1e-9)).sum(-1).mean()),
                "previous_token": float(np.mean(np.diagonal(p, offset=-1))),
                "next_token": float(np.mean(np.diagonal(p, offset=1))),
            })
    return {"tokens": int(n), "uniform_entropy": float(np.log(n)), "heads": rows}


def position_smoothness(backbone):
    positions = backbone.embeddings.position_embeddings.numpy()
    unit = positions / np.linalg.norm(positions, axis=1, keepdims=True)
    return float(np.mean(np.sum(unit[1:] * unit[:-1], axis=1)))


def sentence_order_balance(path):
    labels = np.concatenate([
        features["next_sentence_labels"].numpy()[:, 0]
        for features in pretraining_dataset(path, 1, is_training=False)  # every record: batches drop the remainder
    ])
    share = float(labels.mean())
    return {"instances": int(labels.size), "label_1_share": share,
            "majority_accuracy": max(share, 1.0 - share)}


def fresh_pair_accuracy(pretrainer, proto, path, max_instances=1024, batch_size=32,
                        max_seq_length=128, max_predictions_per_seq=20):
    """Masked-LM and SOP accuracy of `pretrainer` on pairs newly drawn from `path`."""
    instances = create_pretraining_instances(
        read_documents(path), proto, max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq, sentence_task="sop",
        seed=FRESH_PAIRS_SEED)
    with tempfile.TemporaryDirectory() as directory:
        record = str(pathlib.Path(directory) / "pairs.tfrecord")
        count = write_pretraining_tfrecords(itertools.islice(instances, max_instances), [record])
        data = pretraining_dataset(record, batch_size, is_training=False).map(
            lambda features: pretraining_batch(features, "sop"))
        metrics = pretrainer.evaluate(data, return_dict=True, verbose=0)
    return {"instances": int(count), "mlm_accuracy": float(metrics["mlm_accuracy"]),
            "sentence_order_accuracy": float(metrics["sentence_order_accuracy"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--heldout", default=None,
                        help="held-out pretraining TFRecord (pretrain's data/eval.tfrecord)")
    parser.add_argument("--fresh_pairs", nargs="*", default=[],
                        help="text files (one sentence a line) to draw new MLM/SOP pairs from")
    parser.add_argument("--output", default=None, help="also write the report as JSON")
    args = parser.parse_args()
    backbone = keras_albert.AlbertBackbone.from_preset(args.preset)
    tokenizer = keras_albert.AlbertTokenizer.from_preset(args.preset)
    report = {"preset": args.preset, "attention": attention_report(backbone, tokenizer),
              "adjacent_position_cosine": position_smoothness(backbone)}
    if args.heldout:
        report["sentence_order"] = sentence_order_balance(args.heldout)
    if args.fresh_pairs:
        pretrainer = keras_albert.AlbertPretrainer.from_preset(args.preset)
        pretrainer.compile(jit_compile=False)
        report["fresh_pairs"] = {
            path: fresh_pair_accuracy(pretrainer, tokenizer.proto, path) for path in args.fresh_pairs}

    attention = report["attention"]
    print(f"{args.preset}: {attention['tokens']} tokens, uniform entropy "
          f"{attention['uniform_entropy']:.2f}")
    for row in attention["heads"]:
        print(f"  layer {row['layer']} head {row['head']}: entropy {row['entropy']:.2f}, "
              f"previous {row['previous_token']:.3f}, next {row['next_token']:.3f}")
    print(f"adjacent position-embedding cosine: {report['adjacent_position_cosine']:.3f}")
    if args.heldout:
        order = report["sentence_order"]
        print(f"held-out SOP: {order['instances']} instances, label 1 share "
              f"{order['label_1_share']:.3f}, majority accuracy {order['majority_accuracy']:.3f}")
    for path, row in report.get("fresh_pairs", {}).items():
        print(f"fresh pairs of {path}: {row['instances']} instances, MLM "
              f"{row['mlm_accuracy']:.3f}, SOP {row['sentence_order_accuracy']:.3f}")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(report, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
