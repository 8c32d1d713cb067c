"""The project's recommended recipe for fine-tuning a text classifier.

One recipe, used by `make demo`, `benchmarks/transfer.py` and the
`finetune` CLI, so the numbers they print come from the same procedure:
AdamW with linear warmup and decay, a validation split carved from the
training data (never the evaluation data), and Keras's `EarlyStopping`
restoring the epoch with the best validation accuracy.

The defaults were measured on the bundled supersense task (12,000 labelled
glosses, `albert_tiny_en`): held-out accuracy was still rising after 2 and
3 epochs at learning rates 3e-4 and 5e-5 and reached its plateau near 8
epochs at 1e-3 (`benchmarks/transfer.py` records the runs).
"""

import dataclasses

import keras
import numpy as np

from keras_albert.training.schedules import WarmupLinearDecay
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_positive_number


@dataclasses.dataclass
class ClassifierRecipe:
    """Settings of `fine_tune_classifier` (see the module docstring)."""

    epochs: int = 8
    learning_rate: float = 1e-3
    batch_size: int = 64
    warmup_fraction: float = 0.1
    weight_decay: float = 0.01
    # Share of the training examples held back to pick the best epoch;
    # 0 trains on everything for exactly `epochs` epochs.
    validation_fraction: float = 0.1
    # Epochs without a better validation accuracy before training stops.
    patience: int = 2

    def check(self):
        for name in ("epochs", "batch_size", "patience"):
            check_positive_int(name, getattr(self, name))
        check_positive_number("learning_rate", self.learning_rate)
        check_fraction("warmup_fraction", self.warmup_fraction)
        check_fraction("weight_decay", self.weight_decay)
        if not 0 <= self.validation_fraction < 0.5:
            raise ValueError(
                "`validation_fraction` must be in [0, 0.5). "
                f"Received: validation_fraction={self.validation_fraction!r}"
            )


def carve_validation(texts, labels, fraction, seed=0):
    """Splits (texts, labels) into train and validation parts at random."""
    order = np.random.default_rng(seed).permutation(len(texts))
    count = int(round(len(texts) * fraction))
    if fraction and count < 1:
        raise ValueError(
            f"validation_fraction={fraction} of {len(texts)} examples is no "
            "example at all; use more examples or validation_fraction=0."
        )
    labels = np.asarray(labels)
    held, kept = order[:count], order[count:]
    return (
        [texts[i] for i in kept], labels[kept],
        [texts[i] for i in held], labels[held],
    )


def label_ids(classifier, labels):
    """`labels` as class ids: ids pass through; names (strings) are looked
    up in `classifier.label_names`."""
    labels = np.asarray(labels)
    if labels.dtype.kind not in "USO":
        return labels
    names = getattr(classifier, "label_names", None)
    if not names:
        raise ValueError(
            "`labels` are strings, but the classifier has no `label_names` to "
            "map them to class ids. Build it with label_names=[...] or pass "
            f"class ids. Received labels like {labels[:3].tolist()!r}"
        )
    index = {name: i for i, name in enumerate(names)}
    unknown = sorted({str(label) for label in labels} - set(index))
    if unknown:
        raise ValueError(
            f"`labels` holds names the classifier does not know: {unknown[:5]!r}. "
            f"Its label_names: {list(names)!r}"
        )
    return np.asarray([index[str(label)] for label in labels], "int32")


def fine_tune_classifier(classifier, texts, labels, recipe=None, seed=0, verbose=2,
                         callbacks=(), validation_data=None):
    """Fine-tunes `classifier` (an `AlbertClassifier`) on raw texts.

    Args:
        classifier: an `AlbertClassifier` with a preprocessor.
        texts: list of strings.
        labels: class ids, one per text, or class names when the
            classifier has `label_names` (its names travel with it into
            presets and exports).
        recipe: a `ClassifierRecipe` (default: the recommended one).
        seed: seeds the validation split and the order of training texts.
        verbose: Keras `fit` verbosity.
        callbacks: more Keras callbacks (TensorBoard, ...).
        validation_data: (texts, labels) to pick the best epoch on, instead
            of carving `recipe.validation_fraction` of `texts`: for tasks
            whose validation split must not share a source with training
            (passages of one chapter).

    Returns:
        The Keras `History`; `classifier` holds the best epoch's weights.

    Example:
    >>> classifier = keras_albert.AlbertClassifier.from_preset(
    ...     "albert_tiny_en", num_classes=2,
    ...     label_names=["negative", "positive"])  # doctest: +SKIP
    >>> fine_tune_classifier(classifier, texts, ["positive", ...])  # doctest: +SKIP
    """
    recipe = recipe or ClassifierRecipe()
    recipe.check()
    if len(texts) != len(labels):
        raise ValueError(
            f"`texts` and `labels` must have the same length. Received: "
            f"{len(texts)} texts and {len(labels)} labels."
        )
    labels = label_ids(classifier, labels)
    if validation_data is None:
        train_texts, train_labels, val_texts, val_labels = carve_validation(
            texts, labels, recipe.validation_fraction, seed
        )
    else:
        val_texts, val_labels = validation_data
        if not len(val_texts) or len(val_texts) != len(val_labels):
            raise ValueError(
                "`validation_data` must be (texts, labels) of one non-zero length. "
                f"Received: {len(val_texts)} texts and {len(val_labels)} labels."
            )
        val_labels = label_ids(classifier, val_labels)
        # keras-hub batches in-memory texts in the order given, so a table
        # sorted by class would train on one class a batch (the carve-out
        # above permutes as it splits; this permutes the same way).
        order = np.random.default_rng(seed).permutation(len(texts))
        train_texts, train_labels = [texts[i] for i in order], np.asarray(labels)[order]
    steps = recipe.epochs * -(-len(train_texts) // recipe.batch_size)
    classifier.compile(
        optimizer=keras.optimizers.AdamW(
            WarmupLinearDecay(recipe.learning_rate, max(1, int(steps * recipe.warmup_fraction)), steps),
            weight_decay=recipe.weight_decay,
        )
    )
    callbacks = list(callbacks)
    held_out = None
    if len(val_texts):
        held_out = (list(val_texts), np.asarray(val_labels))
        callbacks.append(keras.callbacks.EarlyStopping(
            monitor="val_sparse_categorical_accuracy", mode="max",
            patience=recipe.patience, restore_best_weights=True,
        ))
    return classifier.fit(
        x=train_texts, y=train_labels, batch_size=recipe.batch_size,
        epochs=recipe.epochs, validation_data=held_out,
        callbacks=callbacks, verbose=verbose,
    )
