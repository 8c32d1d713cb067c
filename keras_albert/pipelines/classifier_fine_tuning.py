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
    # Fit the head alone on the frozen model's features first (a linear
    # probe, then fine-tuning: "LP-FT"). For few examples whose pooled
    # features differ by little, e.g. the mean over thousands of tokens,
    # where a fresh head learns too slowly in a few hundred steps.
    head_warm_start: bool = False

    def check(self):
        for name in ("epochs", "batch_size", "patience"):
            check_positive_int(name, getattr(self, name))
        check_positive_number("learning_rate", self.learning_rate)
        check_fraction("warmup_fraction", self.warmup_fraction)
        check_fraction("weight_decay", self.weight_decay)
        if not isinstance(self.head_warm_start, bool):
            raise ValueError(
                f"`head_warm_start` must be True or False. Received: head_warm_start={self.head_warm_start!r}"
            )
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
    probe_accuracy = None
    if recipe.head_warm_start:
        if not len(val_texts):
            raise ValueError("`head_warm_start` picks the head's regularisation on validation "
                             "data: give validation_data or a validation_fraction > 0.")
        probe_accuracy = warm_start_head(classifier, train_texts, train_labels, val_texts, val_labels,
                                         recipe.batch_size, seed)
        probe_weights = classifier.get_weights()
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
    history = classifier.fit(
        x=train_texts, y=train_labels, batch_size=recipe.batch_size,
        epochs=recipe.epochs, validation_data=held_out,
        callbacks=callbacks, verbose=verbose,
    )
    if probe_accuracy is not None:
        history.history["head_warm_start_val_accuracy"] = probe_accuracy
        # The probe is "epoch 0": kept when no fine-tuned epoch beat it.
        if probe_accuracy >= max(history.history["val_sparse_categorical_accuracy"]):
            classifier.set_weights(probe_weights)
            history.history["kept_head_warm_start"] = True
    return history


# Inverse regularisation strengths tried for the warm-start head, as in
# scikit-learn's LogisticRegression (per-example L2 weight 1 / (C n)).
PROBE_C = (0.01, 0.1, 1.0)
PROBE_EPOCHS = 300


def pooled_features(classifier, text_sets, batch_size):
    """What the classifier's head reads for each text of each set, with
    dropout off."""
    features = keras.Model(classifier.inputs, classifier.output_dropout.input)
    return [np.asarray(features.predict(classifier.preprocessor(list(texts)),
                                        batch_size=batch_size, verbose=0), "float64")
            for texts in text_sets]


def warm_start_head(classifier, train_texts, train_labels, val_texts, val_labels, batch_size, seed=0):
    """Sets `classifier`'s head to a softmax regression fitted on the frozen
    model's standardised features (the C of PROBE_C with the best
    validation accuracy), folded back so that it reads the raw features.
    Returns that validation accuracy."""
    train, held = pooled_features(classifier, (train_texts, val_texts), batch_size)
    mean, scale = train.mean(0), train.std(0) + 1e-6
    train, held = (train - mean) / scale, (held - mean) / scale
    train_labels, val_labels = np.asarray(train_labels), np.asarray(val_labels)
    best = None
    for c in PROBE_C:
        keras.utils.set_random_seed(seed)
        head = keras.Sequential([keras.Input((train.shape[1],)), keras.layers.Dense(
            classifier.num_classes, kernel_regularizer=keras.regularizers.L2(0.5 / (c * len(train))))])
        # Full batches: a convex problem, solved well enough in a few hundred Adam steps.
        head.compile(optimizer=keras.optimizers.Adam(0.05),
                     loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        head.fit(train, train_labels, batch_size=len(train), epochs=PROBE_EPOCHS, verbose=0)
        accuracy = float((head.predict(held, verbose=0).argmax(-1) == val_labels).mean())
        if best is None or accuracy > best[0]:
            best = (accuracy, *head.layers[-1].get_weights())
    accuracy, kernel, bias = best
    # W x_std + b = (W / scale) x + (b - (W / scale) . mean)
    folded = kernel / scale[:, None]
    classifier.output_dense.set_weights(
        [folded.astype("float32"), (bias - mean @ folded).astype("float32")])
    return accuracy
