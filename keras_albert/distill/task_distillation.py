"""Task-specific distillation: a student classifier learns a fine-tuned
teacher classifier's predictions (Hinton's soft targets), on the labelled
examples and on any unlabelled in-domain text (a transfer set).

The teacher runs once over the texts (`teacher_logits`); its logits travel
with the examples as targets, so training costs only the student's steps
and works with `fit` under any `tf.distribute` strategy.

Example:
>>> targets = distillation_targets(np.zeros((2, 3)), labels=[1, -1])
>>> targets.shape
(2, 6)
"""

import keras
import numpy as np
from keras import ops

from keras_albert.data.length_bucketed_batches import batches_per_epoch
from keras_albert.data.length_bucketed_batches import bucketed_batches
from keras_albert.distill.losses import tempered_kl
from keras_albert.training.batch_streams import stream_fit
from keras_albert.training.epoch_logging import VALIDATION_PREFIX
from keras_albert.training.epoch_logging import EpochScores
from keras_albert.training.fine_tuning_loop import fit_keeping_best
from keras_albert.training.optimizers import warmup_decay_optimizer
from keras_albert.training.optimizers import warmup_steps_for
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_positive_number

UNLABELLED = -1


def teacher_logits(teacher, texts, batch_size=256):
    """The teacher classifier's logits [examples, classes] for `texts`
    (length-bucketed `predict`, so short texts cost little)."""
    if getattr(teacher, "is_regression", False) or not hasattr(teacher, "num_classes"):
        raise ValueError(
            "`teacher` must be a classifier with `num_classes` >= 2 (an "
            f"`AlbertClassifier`). Received: {type(teacher).__name__}"
        )
    return np.asarray(teacher.predict(texts, batch_size=batch_size, verbose=0), "float32")


def distillation_targets(logits, labels=None):
    """Packs teacher logits and optional true labels into one target array.

    Args:
        logits: [examples, classes] teacher logits.
        labels: None (no example labelled) or one class id per example,
            `-1` for an unlabelled one.

    Returns:
        float32 [examples, 2 * classes]: the logits, then the one-hot true
        label (all zeros when unlabelled). `TaskDistillationLoss` reads it.
    """
    logits = np.asarray(logits, "float32")
    if logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(
            "`logits` must be [examples, classes] with at least 2 classes. "
            f"Received shape {logits.shape}"
        )
    classes = logits.shape[1]
    one_hot = np.zeros_like(logits)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (len(logits),) or labels.dtype.kind not in "iu":
            raise ValueError(
                f"`labels` must be {len(logits)} integer class ids (one per row of "
                f"`logits`, -1 for unlabelled). Received shape {labels.shape}, "
                f"dtype {labels.dtype}"
            )
        bad = (labels < UNLABELLED) | (labels >= classes)
        if bad.any():
            raise ValueError(
                f"`labels` must be class ids in [0, {classes}) or -1 (unlabelled). "
                f"Received {labels[bad][0]} at index {int(np.argmax(bad))}"
            )
        known = labels >= 0
        one_hot[np.flatnonzero(known), labels[known]] = 1.0
    return np.concatenate([logits, one_hot], axis=1)


@keras.saving.register_keras_serializable(package="keras_albert")
class TaskDistillationLoss(keras.losses.Loss):
    """`alpha` x T^2 x KL(teacher || student) at temperature T, plus
    (1 - alpha) x cross-entropy with the true label; rows without a label
    take the soft term alone (weight 1).

    `y_true` is `distillation_targets(...)` [batch, 2 * classes]; `y_pred`
    the student's logits [batch, classes]. Zero when the student's logits
    equal the teacher's and no example is labelled.

    Args:
        temperature: float > 0, softens both distributions in the KL.
        alpha: float in [0, 1], the soft term's weight on labelled rows.
    """

    def __init__(self, temperature=2.0, alpha=0.5, name="task_distillation", **kwargs):
        super().__init__(name=name, **kwargs)
        check_positive_number("temperature", temperature)
        check_fraction("alpha", alpha)
        self.temperature = float(temperature)
        self.alpha = float(alpha)

    def call(self, y_true, y_pred):
        y_pred = ops.cast(y_pred, "float32")
        classes = ops.shape(y_pred)[-1]
        y_true = ops.cast(y_true, "float32")
        teacher, one_hot = y_true[:, :classes], y_true[:, classes:]
        labelled = ops.sum(one_hot, axis=-1)
        soft = tempered_kl(y_pred, teacher, self.temperature) * self.temperature**2
        hard = -ops.sum(one_hot * ops.log_softmax(y_pred, axis=-1), axis=-1)
        soft_weight = labelled * self.alpha + (1.0 - labelled)
        return soft_weight * soft + (1.0 - self.alpha) * hard

    def get_config(self):
        config = super().get_config()
        config.update({"temperature": self.temperature, "alpha": self.alpha})
        return config



def distill_classifier(
    student,
    teacher,
    texts,
    labels=None,
    epochs=3,
    batch_size=64,
    learning_rate=1e-3,
    temperature=2.0,
    alpha=0.5,
    validation_data=None,
    seed=None,
    verbose="auto",
):
    """Trains `student` (an `AlbertClassifier` with a preprocessor) on
    `teacher`'s predictions for `texts`.

    Args:
        student, teacher: `AlbertClassifier`s with the same `num_classes`;
            the teacher is fine-tuned already and is not changed.
        texts: list of strings (the labelled examples and any unlabelled
            in-domain text: the more, the better the transfer).
        labels: None, or one class id per text (-1 for unlabelled).
        epochs, batch_size, learning_rate: AdamW (weight decay 0.01) with
            10 % linear warmup, then linear decay to zero.
        temperature, alpha: see `TaskDistillationLoss`.
        validation_data: optional `(texts, labels)`: held-out accuracy is
            printed and logged (`val_accuracy`) after each epoch.
        seed: shuffling seed.

    Returns:
        The Keras `History` of the student's `fit`.
    """
    for name, model in (("student", student), ("teacher", teacher)):
        if getattr(model, "preprocessor", None) is None or not hasattr(model, "num_classes"):
            raise ValueError(
                f"`{name}` must be an `AlbertClassifier` with a preprocessor. "
                f"Received: {type(model).__name__}"
            )
    if student.num_classes != teacher.num_classes:
        raise ValueError(
            "`student` and `teacher` must predict the same classes. Received: "
            f"student.num_classes={student.num_classes}, "
            f"teacher.num_classes={teacher.num_classes}"
        )
    check_positive_int("epochs", epochs)
    check_positive_int("batch_size", batch_size)
    check_positive_number("learning_rate", learning_rate)
    loss = TaskDistillationLoss(temperature, alpha)
    texts = list(texts)
    if not texts or not all(isinstance(text, str) for text in texts):
        raise ValueError(
            "`texts` must be a non-empty list of strings (single texts; for "
            "pairs, build targets with `distillation_targets` and use "
            "`TaskDistillationLoss` directly)."
        )
    targets = distillation_targets(teacher_logits(teacher, texts), labels)
    dataset = bucketed_batches(student.preprocessor, texts, targets, batch_size=batch_size, seed=seed)
    steps = epochs * batches_per_epoch(dataset)
    student.compile(
        optimizer=warmup_decay_optimizer(learning_rate, steps, warmup_steps_for(steps)),
        loss=loss,
        metrics=[],
    )
    # The held-out texts are scored and logged, never used to choose: the
    # last epoch is kept (callers pass their test data here).
    scores = HeldOutAccuracy(*validation_data) if validation_data is not None else None
    return fit_keeping_best(
        student, epochs, fit=stream_fit(student), scores=scores, verbose=verbose, x=dataset, shuffle=False
    ).history


class HeldOutAccuracy(EpochScores):
    """Adds `val_accuracy` (argmax against true labels on held-out texts)
    to each epoch's logs and prints it."""

    def __init__(self, texts, labels, batch_size=256):
        texts = list(texts)
        super().__init__([(VALIDATION_PREFIX, "held-out data", lambda model: {
            "accuracy": held_out_accuracy(model, texts, labels, batch_size)})])


def held_out_accuracy(classifier, texts, labels, batch_size=256):
    """Share of `texts` whose argmax prediction is the true label."""
    logits = classifier.predict(list(texts), batch_size=batch_size, verbose=0)
    return float((np.argmax(logits, axis=-1) == np.asarray(labels)).mean())
