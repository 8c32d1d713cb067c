"""Hugging Face's ALBERT task models <-> ours, heads included.

Each pair computes the same head, one dense layer that Hugging Face stores
[outputs, hidden] and Keras [hidden, outputs]:

| ours | Hugging Face | reads | head |
|---|---|---|---|
| `AlbertClassifier` | `AlbertForSequenceClassification` | pooled [CLS] | `classifier` |
| `AlbertTokenClassifier` | `AlbertForTokenClassification` | every token | `classifier` |
| `AlbertQuestionAnswerer` | `AlbertForQuestionAnswering` | every token | `qa_outputs` (start, end) |
| `AlbertMultipleChoice` | `AlbertForMultipleChoice` | pooled [CLS] per choice | `classifier` (one score) |

Hugging Face builds the two token-level models without ALBERT's pooler, so
it is left out going there and keeps fresh weights coming back (neither
head reads it). Class names travel as `id2label`, whose defaults
(`LABEL_0`, ...) mean none were given; a regressor is `num_labels=1` with
`problem_type="regression"`. Hugging Face's heads output logits: our
classifier converts with no activation or softmax (whose logits Hugging
Face's pipelines softmax again).
"""

import dataclasses
import re

import keras
import numpy as np

from keras_albert.convert.keras_hub_tasks import packed_length
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_multiple_choice_preprocessor import (
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_question_answerer_preprocessor import (
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier
from keras_albert.models.albert_token_classifier_preprocessor import (
    AlbertTokenClassifierPreprocessor,
)


@dataclasses.dataclass(frozen=True)
class TaskHead:
    """One task model both ways: Hugging Face's class, ours, the attribute
    of ours holding the head's Dense, Hugging Face's name for it, and
    whether Hugging Face's model keeps the pooler."""

    architecture: str
    task_class: type
    preprocessor_class: type
    dense: str
    hf_name: str
    pooler: bool

    @property
    def names(self):
        return (f"{self.hf_name}.weight", f"{self.hf_name}.bias")


TASK_HEADS = (
    TaskHead("AlbertForSequenceClassification", AlbertClassifier, AlbertTextClassifierPreprocessor,
             "output_dense", "classifier", pooler=True),
    TaskHead("AlbertForTokenClassification", AlbertTokenClassifier, AlbertTokenClassifierPreprocessor,
             "output_dense", "classifier", pooler=False),
    TaskHead("AlbertForQuestionAnswering", AlbertQuestionAnswerer, AlbertQuestionAnswererPreprocessor,
             "span_dense", "qa_outputs", pooler=False),
    TaskHead("AlbertForMultipleChoice", AlbertMultipleChoice, AlbertMultipleChoicePreprocessor,
             "output_dense", "classifier", pooler=True),
)
HEADS_BY_ARCHITECTURE = {head.architecture: head for head in TASK_HEADS}
POOLER_NAMES = ("pooler.weight", "pooler.bias")
# What Hugging Face names classes nobody named.
_DEFAULT_LABEL = re.compile(r"LABEL_(\d+)")
_LOGIT_ACTIVATIONS = ("linear", "softmax")
# The `problem_type`s AlbertClassifier computes.
SINGLE_LABEL, REGRESSION = "single_label_classification", "regression"


def task_head_of(model):
    """The `TaskHead` of one of our task models, or None."""
    return next((head for head in TASK_HEADS if isinstance(model, head.task_class)), None)


def _activation_name(model):
    activation = keras.activations.serialize(model.activation)
    return activation if isinstance(activation, str) else activation.get("config", {}).get("name")


def _check_classifier(classifier):
    if classifier.pooling != "cls":
        raise ValueError(
            "Hugging Face's AlbertForSequenceClassification reads the pooled [CLS] output only, so a "
            f"classifier with pooling={classifier.pooling!r} has no Hugging Face form. Fine-tune "
            "with pooling='cls' to convert it."
        )
    if _activation_name(classifier) not in _LOGIT_ACTIVATIONS:
        raise ValueError(
            "Hugging Face's AlbertForSequenceClassification outputs logits; this classifier applies "
            f"activation={_activation_name(classifier)!r} (accepted: {list(_LOGIT_ACTIVATIONS)})."
        )


def hf_task_head(model):
    """({Hugging Face name: array}, config.json entries) for the head of
    our task `model`.

    Raises:
        ValueError: for a classifier head Hugging Face's cannot compute
            (mean pooling, an activation other than none or softmax).
    """
    head = task_head_of(model)
    if isinstance(model, AlbertClassifier):
        _check_classifier(model)
    kernel, bias = (np.asarray(w) for w in getattr(model, head.dense).get_weights())
    state = {head.names[0]: np.ascontiguousarray(kernel.T), head.names[1]: bias}
    config = {}
    if hasattr(model, "dropout"):
        config["classifier_dropout_prob"] = model.dropout
    if isinstance(model, (AlbertClassifier, AlbertTokenClassifier)):
        config["num_labels"] = model.num_classes
    if isinstance(model, AlbertQuestionAnswerer):
        config["num_labels"] = 2  # start and end
    if isinstance(model, AlbertClassifier):
        config["problem_type"] = REGRESSION if model.is_regression else SINGLE_LABEL
    if getattr(model, "label_names", None):
        config["id2label"] = {str(i): name for i, name in enumerate(model.label_names)}
        config["label2id"] = {name: i for i, name in enumerate(model.label_names)}
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
            f"{source}: `id2label` names ids {sorted(by_id)[:10]}, and the head has "
            f"{num_labels} classes (ids 0 to {num_labels - 1})."
        )
    names = [by_id[i] for i in range(num_labels)]
    if all(_DEFAULT_LABEL.fullmatch(str(n)) and int(n[6:]) == i for i, n in enumerate(names)):
        return None
    return names


def _head_arrays(head, state, backbone, source):
    weight, bias = (np.asarray(state[name]) for name in head.names)
    if weight.ndim != 2 or bias.shape != (weight.shape[0],) or weight.shape[1] != backbone.hidden_dim:
        raise ValueError(
            f"{source}: the {head.hf_name} head holds shapes {weight.shape} and {bias.shape}; a "
            f"backbone of hidden size {backbone.hidden_dim} needs [outputs, {backbone.hidden_dim}] "
            "and [outputs]."
        )
    return weight, bias


def _task_arguments(head, raw_config, outputs, source):
    """Our task's constructor arguments other than backbone and preprocessor."""
    if head.task_class is AlbertQuestionAnswerer:
        if outputs != 2:
            raise ValueError(f"{source}: its qa_outputs head has {outputs} outputs; a span head has 2.")
        return {}
    dropout = raw_config.get("classifier_dropout_prob")
    arguments = {"dropout": raw_config.get("hidden_dropout_prob", 0.1) if dropout is None else dropout}
    if head.task_class is AlbertMultipleChoice:
        return arguments
    if head.task_class is AlbertClassifier:
        problem_type = raw_config.get("problem_type") or (REGRESSION if outputs == 1 else SINGLE_LABEL)
        if problem_type not in (SINGLE_LABEL, REGRESSION) or (problem_type == REGRESSION) != (outputs == 1):
            raise ValueError(
                f"{source}: problem_type={problem_type!r} with {outputs} label(s); AlbertClassifier is "
                "single-label classification (num_labels > 1) or regression (num_labels=1)."
            )
    return {**arguments, "num_classes": outputs, "label_names": hf_label_names(raw_config, outputs, source)}


def task_from_hf(head, backbone, state, raw_config, tokenizer, source):
    """Our task model of `head` on `backbone` with the Hugging Face head in
    `state`, its dropout and class names, and a preprocessor packing to
    the backbone's positions (at most 512) when a `tokenizer` is given."""
    weight, bias = _head_arrays(head, state, backbone, source)
    arguments = _task_arguments(head, raw_config, weight.shape[0], source)
    preprocessor = None
    if tokenizer is not None:
        preprocessor = head.preprocessor_class(tokenizer, sequence_length=packed_length(None, backbone))
    model = head.task_class(backbone, preprocessor=preprocessor, **arguments)
    getattr(model, head.dense).set_weights([weight.T, bias])
    return model
