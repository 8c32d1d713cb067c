"""Fine-tunes a text classifier with the recommended recipe
(`ClassifierRecipe`, defined and explained in `classifier_recipe.py`)."""

import keras
import numpy as np

from keras_albert.data.validation_split import validation_indices
from keras_albert.pipelines.classifier_recipe import ClassifierRecipe
from keras_albert.pipelines.classifier_recipe import recommended_learning_rate
from keras_albert.training.fine_tuning_loop import fit_keeping_best
from keras_albert.training.optimizers import warmup_decay_optimizer
from keras_albert.training.optimizers import warmup_steps_for
from keras_albert.training.softmax_regression import fit_softmax_regression


def carve_validation(texts, labels, fraction, seed=0):
    """Splits (texts, labels) into train and validation parts at random,
    stratified by label, both in a shuffled order (keras-hub batches
    in-memory texts as given)."""
    kept, held = validation_indices(len(texts), fraction, seed, labels=labels)
    labels = np.asarray(labels)
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


def compile_for_recipe(classifier, recipe, steps):
    """Compiles `classifier` with the recipe's optimizer for `steps`
    training steps (warmup, then linear decay; AdamW)."""
    learning_rate = recipe.learning_rate or recommended_learning_rate(classifier.backbone.hidden_dim)
    classifier.compile(
        optimizer=warmup_decay_optimizer(
            learning_rate, steps, warmup_steps_for(steps, recipe.warmup_fraction),
            weight_decay=recipe.weight_decay,
        )
    )


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
        The Keras `History`; `classifier` holds the best epoch's weights
        (the latest of equally scored epochs; with the head warm start,
        the fitted head counts as epoch 0: `kept_head_warm_start` in the
        history when no epoch reached its validation accuracy).

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
        probe_accuracy = warm_start_head(classifier, train_texts, train_labels, val_texts, val_labels,
                                         recipe.batch_size, seed)
    compile_for_recipe(classifier, recipe, recipe.epochs * -(-len(train_texts) // recipe.batch_size))
    held_out, monitor, epoch_zero = None, None, None
    if len(val_texts):
        held_out = (list(val_texts), np.asarray(val_labels))
        monitor = "val_sparse_categorical_accuracy"
        if probe_accuracy is not None:
            # The probe is "epoch 0": kept when no fine-tuned epoch reaches it.
            epoch_zero = {monitor: probe_accuracy}
    outcome = fit_keeping_best(
        classifier, recipe.epochs, monitor=monitor, patience=recipe.patience, epoch_zero=epoch_zero,
        callbacks=callbacks, verbose=verbose, monitor_description="validation accuracy",
        x=train_texts, y=train_labels, batch_size=recipe.batch_size, validation_data=held_out,
    )
    history = outcome.history
    if probe_accuracy is not None:
        history.history["head_warm_start_val_accuracy"] = probe_accuracy
        if outcome.kept_epoch == 0:
            history.history["kept_head_warm_start"] = True
    return history


# Inverse regularisation strengths tried for the warm-start head, as in
# scikit-learn's LogisticRegression (per-example L2 weight 1 / (C n)), and
# the one used when there is no validation data to choose with.
PROBE_C = (0.01, 0.1, 1.0)
PROBE_C_WITHOUT_VALIDATION = 0.1
MIN_FEATURE_SPREAD = 1e-2
PROBE_STEPS = 300
PROBE_LEARNING_RATE = 0.05


def pooled_features(classifier, texts, batch_size, training=False):
    """What the classifier's head reads for each text: with dropout off, or
    (`training=True`) with one dropout draw per text, as fine-tuning will
    show it to the head."""
    features = keras.Model(classifier.inputs, classifier.output_dropout.output)
    # Pair tasks pass (firsts, seconds), which the preprocessor takes as is.
    inputs = classifier.preprocessor(texts if isinstance(texts, tuple) else list(texts))
    if not training:
        return np.asarray(features.predict(inputs, batch_size=batch_size, verbose=0), "float64")
    # `predict` always runs with dropout off, so batches go by hand.
    inputs = {name: np.asarray(value) for name, value in inputs.items()}
    count = len(inputs["token_ids"])
    # convert_to_numpy: a PyTorch output requires grad, which np.asarray refuses.
    return np.concatenate([
        np.asarray(keras.ops.convert_to_numpy(
            features({k: v[start:start + batch_size] for k, v in inputs.items()}, training=True)), "float64")
        for start in range(0, count, batch_size)
    ])


def warm_start_head(classifier, train_texts, train_labels, val_texts, val_labels, batch_size, seed=0):
    """Sets `classifier`'s head to a softmax regression fitted on the frozen
    model's standardised features (the C of PROBE_C with the best
    validation accuracy), folded back so that it reads the raw features.
    Returns that validation accuracy (None without validation texts)."""
    validate = len(val_texts) > 0
    # The probe reads training features as fine-tuning will, dropout and
    # all. Dropout moves a feature by its size, not its spread: fitted on
    # dropout-free features, the head gave large, steady but small-spread
    # features large weights, and the first fine-tuning batches then saw
    # losses above 10 that wrecked the backbone (the first bundled preset on
    # 540 glosses: a first epoch's mean loss of 12.8, against 2.0 this way).
    keras.utils.set_random_seed(seed)
    train = pooled_features(classifier, train_texts, batch_size, training=True)
    held = pooled_features(classifier, val_texts, batch_size) if validate else None
    # Spreads are floored: features that barely vary (an untrained model's)
    # would otherwise fold huge weights into the head, which then amplify
    # float noise (a serving SavedModel and the Keras model disagree). The
    # pretrained presets' pooled features spread by 0.02 to 0.9.
    mean = train.mean(0)
    scale = np.maximum(train.std(0), MIN_FEATURE_SPREAD)
    train = (train - mean) / scale
    if validate:
        held = (held - mean) / scale
    train_labels, val_labels = np.asarray(train_labels), np.asarray(val_labels)
    best = None
    for c in PROBE_C if validate else (PROBE_C_WITHOUT_VALIDATION,):
        # A convex problem, solved well enough in a few hundred full-batch
        # Adam steps (in NumPy: see softmax_regression).
        kernel, bias = fit_softmax_regression(
            train, train_labels, classifier.num_classes, l2=0.5 / (c * len(train)),
            steps=PROBE_STEPS, learning_rate=PROBE_LEARNING_RATE, seed=seed)
        accuracy = None
        if validate:
            accuracy = float(((held @ kernel + bias).argmax(-1) == val_labels).mean())
        if best is None or accuracy > best[0]:
            best = (accuracy, kernel, bias)
    accuracy, kernel, bias = best
    # W x_std + b = (W / scale) x + (b - (W / scale) . mean)
    folded = kernel / scale[:, None]
    classifier.output_dense.set_weights(
        [folded.astype("float32"), (bias - mean @ folded).astype("float32")])
    return accuracy

