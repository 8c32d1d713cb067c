"""The metrics ALBERT's tasks are reported with (GLUE, SQuAD, RACE, CoNLL).

Plain NumPy on predictions and references, so they work on any output.
"""

import collections
import re
import string

import numpy as np


def accuracy(predictions, labels):
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    return float((predictions == labels).mean()) if labels.size else 0.0


def f1_binary(predictions, labels, positive=1):
    """F1 of the positive class (MRPC, QQP)."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    true_positive = np.sum((predictions == positive) & (labels == positive))
    predicted = np.sum(predictions == positive)
    actual = np.sum(labels == positive)
    if true_positive == 0:
        return 0.0
    precision, recall = true_positive / predicted, true_positive / actual
    return float(2 * precision * recall / (precision + recall))


def f1_macro(predictions, labels):
    classes = np.union1d(np.asarray(predictions), np.asarray(labels))
    return float(np.mean([f1_binary(predictions, labels, c) for c in classes]))


def matthews_correlation(predictions, labels):
    """Matthews correlation for binary labels (CoLA)."""
    p, y = np.asarray(predictions) == 1, np.asarray(labels) == 1
    tp, tn = np.sum(p & y), np.sum(~p & ~y)
    fp, fn = np.sum(p & ~y), np.sum(~p & y)
    denominator = np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0


def pearson(predictions, labels):
    x, y = np.asarray(predictions, float), np.asarray(labels, float)
    if x.std() == 0 or y.std() == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])


def _ranks(values):
    """Average ranks (ties share their mean rank), as Spearman needs."""
    values = np.asarray(values, float)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(len(values))
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(predictions, labels):
    return pearson(_ranks(predictions), _ranks(labels))


def _normalize_answer(text):
    """Lowercase, drop punctuation, articles and extra spaces (SQuAD's rule)."""
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_exact_match(prediction, gold_answers):
    gold_answers = list(gold_answers) or [""]
    return float(max(_normalize_answer(prediction) == _normalize_answer(g) for g in gold_answers))


def squad_f1(prediction, gold_answers):
    def f1(prediction_tokens, gold_tokens):
        if not prediction_tokens or not gold_tokens:
            return float(prediction_tokens == gold_tokens)
        common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
        overlap = sum(common.values())
        if overlap == 0:
            return 0.0
        precision = overlap / len(prediction_tokens)
        recall = overlap / len(gold_tokens)
        return 2 * precision * recall / (precision + recall)

    gold_answers = list(gold_answers) or [""]
    predicted = _normalize_answer(prediction).split()
    return float(max(f1(predicted, _normalize_answer(g).split()) for g in gold_answers))


def squad_scores(predictions, gold_answers):
    """{"exact_match", "f1"} in percent over examples (official definition)."""
    if not predictions:
        return {"exact_match": 0.0, "f1": 0.0}
    return {
        "exact_match": 100 * float(np.mean([squad_exact_match(p, g) for p, g in zip(predictions, gold_answers)])),
        "f1": 100 * float(np.mean([squad_f1(p, g) for p, g in zip(predictions, gold_answers)])),
    }


# The chunk prefixes of the IOB1, IOB2 (BIO) and IOBES tagging schemes.
_CHUNK_PREFIXES = ("B", "I", "E", "S")


def is_entity_scheme(labels):
    """Whether tag names are chunk tags (`O`, and `B-`/`I-`/`E-`/`S-` with a
    type), as CoNLL NER's: their entities are then scored as spans."""
    tags = [label for label in labels if label != "O"]
    return bool(tags) and all(
        "-" in tag and tag.split("-", 1)[0] in _CHUNK_PREFIXES and tag.split("-", 1)[1] for tag in tags
    )


def entity_spans(tags):
    """The entities of one sentence's chunk tags, as `{(start, end, type)}`
    (end exclusive), by CoNLL's conlleval rules: a chunk starts at B- or S-,
    or at I-/E- after O, another type or a chunk's end (IOB1); it ends after
    E- or S-, or before O, B-, S- or another type."""
    spans, start, kind = set(), None, None
    for i, tag in enumerate([*tags, "O"]):
        prefix, _, tag_kind = tag.partition("-") if tag != "O" else ("O", "", None)
        begins = prefix in ("B", "S") or (prefix in ("I", "E") and (start is None or tag_kind != kind))
        if start is not None and (prefix == "O" or begins):
            spans.add((start, i, kind))
            start = kind = None
        if begins:
            start, kind = i, tag_kind
        if prefix in ("E", "S") and start is not None:
            spans.add((start, i + 1, kind))
            start = kind = None
    return spans


def entity_f1(predicted, gold):
    """Micro F1 over entities (CoNLL-2003's score): an entity counts only
    where its type and both ends match. `predicted` and `gold` are lists of
    per-sentence tag-name lists."""
    found = correct = expected = 0
    for predicted_tags, gold_tags in zip(predicted, gold, strict=True):
        ours, theirs = entity_spans(predicted_tags), entity_spans(gold_tags)
        found, expected, correct = found + len(ours), expected + len(theirs), correct + len(ours & theirs)
    if not correct:
        return 0.0
    precision, recall = correct / found, correct / expected
    return float(2 * precision * recall / (precision + recall))


def word_label_scores(predicted, labels, names, metrics):
    """{metric: score} of a token classifier, in `metrics`' order:
    `predicted` and `labels` are per-sentence lists of class ids (predicted
    -1: a word the length cut, wrong for every word metric and outside
    every entity); `entity_f1` reads the ids as `names`' tags."""
    flat_true = np.concatenate([np.asarray(row) for row in labels])
    flat_predicted = np.concatenate([np.asarray(row) for row in predicted])
    scores = {name: METRICS[name](flat_predicted, flat_true) for name in metrics if name != "entity_f1"}
    if "entity_f1" in metrics:
        scores["entity_f1"] = entity_f1([[names[i] if i >= 0 else "O" for i in row] for row in predicted],
                                        [[names[i] for i in row] for row in labels])
    return {name: scores[name] for name in metrics}


METRICS = {
    "accuracy": accuracy,
    "f1": f1_binary,
    "f1_macro": f1_macro,
    "matthews_correlation": matthews_correlation,
    "pearson": pearson,
    "spearman": spearman,
}
