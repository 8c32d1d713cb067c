"""Hugging Face's `AlbertForSequenceClassification` <-> our `AlbertClassifier`,
head included.

Both heads read the pooled [CLS] output (ALBERT's pooler), drop out and
apply one dense layer: Hugging Face's `classifier` Linear, stored [classes,
hidden], is our "logits" Dense, stored [hidden, classes]. Class names travel
as Hugging Face's `id2label`, whose default names (`LABEL_0`, ...) mean none
were given. A regressor is `num_labels=1` with `problem_type="regression"`.
Hugging Face's classifier outputs logits: ours converts with no activation
or softmax (whose logits Hugging Face's pipelines softmax again).
"""

import re

import keras
import numpy as np

from keras_albert.convert.keras_hub_tasks import packed_length
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)

HF_CLASSIFIER = "AlbertForSequenceClassification"
HEAD_NAMES = ("classifier.weight", "classifier.bias")
# What Hugging Face names classes nobody named.
_DEFAULT_LABEL = re.compile(r"LABEL_(\d+)")
_LOGIT_ACTIVATIONS = ("linear", "softmax")
# The `problem_type`s AlbertClassifier computes.
SINGLE_LABEL, REGRESSION = "single_label_classification", "regression"


def hf_classifier_head(classifier):
    """({Hugging Face name: array}, config.json entries) for the head of
    our `classifier`.

    Raises:
        ValueError: for a head Hugging Face's classifier cannot compute
            (mean pooling, an activation other than none or softmax).
    """
    if classifier.pooling != "cls":
        raise ValueError(
            "Hugging Face's AlbertForSequenceClassification reads the pooled [CLS] output only, so a "
            f"classifier with pooling={classifier.pooling!r} has no Hugging Face form. Fine-tune "
            "with pooling='cls' to convert it."
        )
    activation = keras.activations.serialize(classifier.activation)
    activation = activation if isinstance(activation, str) else activation.get("config", {}).get("name")
    if activation not in _LOGIT_ACTIVATIONS:
        raise ValueError(
            "Hugging Face's AlbertForSequenceClassification outputs logits; this classifier applies "
            f"activation={activation!r} (accepted: {list(_LOGIT_ACTIVATIONS)})."
        )
    kernel, bias = (np.asarray(w) for w in classifier.output_dense.get_weights())
    state = {"classifier.weight": np.ascontiguousarray(kernel.T), "classifier.bias": bias}
    config = {
        "num_labels": classifier.num_classes,
        "classifier_dropout_prob": classifier.dropout,
        "problem_type": REGRESSION if classifier.is_regression else SINGLE_LABEL,
    }
    if classifier.label_names:
        config["id2label"] = {str(i): name for i, name in enumerate(classifier.label_names)}
        config["label2id"] = {name: i for i, name in enumerate(classifier.label_names)}
    return state, config


def hf_label_names(raw_config, num_labels, source):
    """The class names of a Hugging Face config, or None where it holds
    only the defaults (`LABEL_i`) or is a regressor."""
    id2label = raw_config.get("id2label") or {}
    if num_labels == 1 or not id2label:
        return None
    try:
        by_id = {int(key): value for key, value in id2label.items()}
    except (TypeError, ValueError, AttributeError):
        raise ValueError(f"{source}: `id2label` must map class ids to names. Received: {id2label!r:.200}") from None
    if sorted(by_id) != list(range(num_labels)):
        raise ValueError(
            f"{source}: `id2label` names ids {sorted(by_id)[:10]}, and the classifier has "
            f"{num_labels} classes (ids 0 to {num_labels - 1})."
        )
    names = [by_id[i] for i in range(num_labels)]
    if all(_DEFAULT_LABEL.fullmatch(str(n)) and int(n[6:]) == i for i, n in enumerate(names)):
        return None
    return names


def classifier_from_hf(backbone, head, raw_config, tokenizer, source):
    """Our `AlbertClassifier` on `backbone` with the Hugging Face head
    `head` ({"classifier.weight", "classifier.bias"}), its dropout, class
    names and a preprocessor packing to the backbone's positions (at most
    512) when a `tokenizer` is given."""
    weight, bias = (np.asarray(head[name]) for name in HEAD_NAMES)
    if weight.ndim != 2 or bias.shape != (weight.shape[0],) or weight.shape[1] != backbone.hidden_dim:
        raise ValueError(
            f"{source}: the classifier head holds shapes {weight.shape} and {bias.shape}; a "
            f"backbone of hidden size {backbone.hidden_dim} needs [classes, {backbone.hidden_dim}] "
            "and [classes]."
        )
    num_labels = weight.shape[0]
    problem_type = raw_config.get("problem_type") or (REGRESSION if num_labels == 1 else SINGLE_LABEL)
    if problem_type not in (SINGLE_LABEL, REGRESSION) or (problem_type == REGRESSION) != (num_labels == 1):
        raise ValueError(
            f"{source}: problem_type={problem_type!r} with {num_labels} label(s); AlbertClassifier is "
            f"single-label classification (num_labels > 1) or regression (num_labels=1)."
        )
    preprocessor = None
    if tokenizer is not None:
        preprocessor = AlbertTextClassifierPreprocessor(
            tokenizer, sequence_length=packed_length(None, backbone)
        )
    dropout = raw_config.get("classifier_dropout_prob")
    classifier = AlbertClassifier(
        backbone,
        num_classes=num_labels,
        preprocessor=preprocessor,
        dropout=0.1 if dropout is None else dropout,
        label_names=hf_label_names(raw_config, num_labels, source),
    )
    classifier.output_dense.set_weights([weight.T, bias])
    return classifier
