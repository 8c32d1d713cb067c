"""The recommended fine-tuning recipe: validation carved from training, best epoch kept."""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.pipelines import ClassifierRecipe
from keras_albert.pipelines import fine_tune_classifier
from keras_albert.pipelines.classifier_fine_tuning import carve_validation
from keras_albert.pipelines.classifier_fine_tuning import label_ids


def test_carve_validation_is_disjoint_and_seeded():
    texts = [f"t{i}" for i in range(50)]
    a = carve_validation(texts, np.arange(50), 0.2, seed=1)
    b = carve_validation(texts, np.arange(50), 0.2, seed=1)
    assert a[0] == b[0] and len(a[2]) == 10 and len(a[0]) == 40
    assert not set(a[0]) & set(a[2])
    assert [f"t{i}" for i in a[1]] == a[0]


def test_labels_may_be_the_classifier_label_names(tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config)
    named = keras_albert.AlbertClassifier(backbone, num_classes=3, label_names=["negative", "neutral", "positive"])
    assert label_ids(named, ["positive", "negative", "neutral"]).tolist() == [2, 0, 1]
    assert label_ids(named, [2, 0]).tolist() == [2, 0]
    with pytest.raises(ValueError, match="does not know: \\['happy'\\]"):
        label_ids(named, ["positive", "happy"])
    unnamed = keras_albert.AlbertClassifier(backbone, num_classes=3)
    with pytest.raises(ValueError, match="no `label_names`"):
        label_ids(unnamed, ["positive"])


@pytest.mark.parametrize("field, value, message", [
    ("epochs", 0, "epochs"), ("learning_rate", -1.0, "learning_rate"),
    ("validation_fraction", 0.7, "validation_fraction"), ("patience", 1.5, "patience"),
])
def test_bad_recipe_is_named(field, value, message):
    recipe = ClassifierRecipe(**{field: value})
    with pytest.raises(ValueError, match=message):
        recipe.check()


@pytest.mark.large
def test_recipe_learns_and_restores_the_best_epoch(sentencepiece_proto):
    keras.utils.set_random_seed(0)
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=1, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=16)
    classifier = keras_albert.AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor)
    texts = ["the cat sat on the mat", "the dog ran in the park"] * 40
    labels = [0, 1] * 40
    history = fine_tune_classifier(
        classifier, texts, labels,
        ClassifierRecipe(epochs=6, learning_rate=3e-3, batch_size=8, patience=6), verbose=0)
    accuracy = history.history["val_sparse_categorical_accuracy"]
    assert len(accuracy) == 6 and max(accuracy) == 1.0
    predictions = classifier.predict(texts[:2], verbose=0).argmax(-1)
    assert predictions.tolist() == [0, 1]


def test_length_mismatch_is_named():
    with pytest.raises(ValueError, match="3 texts and 2 labels"):
        fine_tune_classifier(None, ["a", "b", "c"], [0, 1])


class RecordingClassifier:
    """Stands in for a classifier: records what the recipe passes to fit."""

    def compile(self, **kwargs):
        self.compiled = kwargs

    def fit(self, **kwargs):
        self.fitted = kwargs
        return kwargs


def _plain_recipe(**overrides):
    # What a stand-in can run: no head to warm-start, no backbone to size the rate by.
    return ClassifierRecipe(**{"head_warm_start": False, "learning_rate": 1e-3, **overrides})


def _peak_learning_rate(recording):
    schedule = recording.compiled["optimizer"].get_config()["learning_rate"]
    return schedule["config"]["peak_learning_rate"]


def test_the_learning_rate_follows_the_backbone_width_unless_given():
    from keras_albert.pipelines import recommended_learning_rate

    assert recommended_learning_rate(256) == 1e-3 and recommended_learning_rate(128) == 1e-3
    assert recommended_learning_rate(768) == 5e-5
    classifier = RecordingClassifier()
    classifier.backbone = type("Backbone", (), {"hidden_dim": 4096})()
    recipe = ClassifierRecipe(head_warm_start=False, batch_size=2)
    fine_tune_classifier(classifier, list("abcdefghij"), [0, 1] * 5, recipe)
    assert _peak_learning_rate(classifier) == 5e-5
    fine_tune_classifier(classifier, list("abcdefghij"), [0, 1] * 5,
                         ClassifierRecipe(head_warm_start=False, batch_size=2, learning_rate=3e-4))
    assert _peak_learning_rate(classifier) == 3e-4


def test_given_validation_data_replaces_the_carved_split():
    classifier = RecordingClassifier()
    texts, labels = [f"t{i}" for i in range(10)], list(range(10))
    fine_tune_classifier(classifier, texts, labels, _plain_recipe(batch_size=2),
                         validation_data=(["v1", "v2"], [0, 1]))
    fit = classifier.fitted
    # Every training text trains, in a seeded shuffled order (keras-hub
    # batches in-memory texts as given: a class-sorted table would train
    # one class a batch); the given texts validate and pick the epoch.
    assert sorted(fit["x"]) == sorted(texts) and fit["x"] != texts
    assert [int(t[1:]) for t in fit["x"]] == fit["y"].tolist()
    assert fit["validation_data"][0] == ["v1", "v2"]
    assert fit["validation_data"][1].tolist() == [0, 1]
    assert any(isinstance(c, keras.callbacks.EarlyStopping) for c in fit["callbacks"])
    carved = RecordingClassifier()
    fine_tune_classifier(carved, texts, labels, _plain_recipe(batch_size=2, validation_fraction=0.2))
    assert len(carved.fitted["x"]) == 8 and len(carved.fitted["validation_data"][0]) == 2


@pytest.mark.parametrize("validation_data", [([], []), (["v1", "v2"], [0])])
def test_bad_validation_data_is_named(validation_data):
    with pytest.raises(ValueError, match="validation_data"):
        fine_tune_classifier(RecordingClassifier(), ["a", "b"], [0, 1],
                             validation_data=validation_data)


def _mean_pooled_classifier(sentencepiece_proto, seed=0, dropout=0.1):
    keras.utils.set_random_seed(seed)
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=1, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=16)
    return keras_albert.AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor,
                                         pooling="mean", dropout=dropout)


def _animal_texts(count, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, count)
    words = ["the", "a", "sat", "ran", "on", "in", "park", "mat", "big", "small"]
    texts = [" ".join([*rng.choice(words, 1), *[("cat", "dog")[label]] * 3, *rng.choice(words, 1)])
             for label in labels]
    return texts, labels


def test_warm_start_head_reads_the_raw_features_as_the_probe_read_standardised_ones(
        sentencepiece_proto):
    from keras_albert.pipelines.classifier_fine_tuning import warm_start_head

    classifier = _mean_pooled_classifier(sentencepiece_proto)
    train_texts, train_labels = _animal_texts(128, seed=1)
    val_texts, val_labels = _animal_texts(64, seed=2)
    backbone_before = [np.array(w) for w in classifier.backbone.get_weights()]
    accuracy = warm_start_head(classifier, train_texts, train_labels, val_texts, val_labels, 16)
    # The folded head gives the probe's validation accuracy by itself.
    predicted = classifier.predict(val_texts, verbose=0).argmax(-1)
    assert accuracy == float((predicted == val_labels).mean())
    # A frozen random backbone already separates "cat" from "dog" texts.
    assert accuracy >= 0.9
    for before, after in zip(backbone_before, classifier.backbone.get_weights()):
        np.testing.assert_array_equal(before, after)


def test_warm_started_head_holds_up_under_the_dropout_fine_tuning_applies(sentencepiece_proto):
    from keras_albert.pipelines.classifier_fine_tuning import warm_start_head

    classifier = _mean_pooled_classifier(sentencepiece_proto)
    # Half the pooled features large and steady, as a pretrained model's
    # often are: dropout moves them far more than they ever vary.
    norm = classifier.backbone.get_layer("encoder").weights[-2:]
    gamma, beta = (keras.ops.convert_to_numpy(w) for w in norm)
    gamma[:8], beta[:8] = 0.05, 3.0
    norm[0].assign(gamma), norm[1].assign(beta)
    texts, labels = _animal_texts(128, seed=1)
    val_texts, val_labels = _animal_texts(64, seed=2)
    warm_start_head(classifier, texts, labels, val_texts, val_labels, 16)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    inputs = classifier.preprocessor(texts)
    # What fine-tuning's first batches see: dropout on, the head as fitted.
    training_loss = np.mean([float(loss(labels, classifier(inputs, training=True))) for _ in range(5)])
    assert training_loss < 0.5, training_loss


def test_warm_start_head_reads_text_pairs(sentencepiece_proto):
    from keras_albert.pipelines.classifier_fine_tuning import warm_start_head

    classifier = _mean_pooled_classifier(sentencepiece_proto)
    firsts, labels = _animal_texts(128, seed=1)
    val_firsts, val_labels = _animal_texts(64, seed=2)
    seconds, val_seconds = ["it sat on the mat"] * 128, ["it ran in the park"] * 64
    # (firsts, seconds), as the finetune CLI passes pair tasks: one
    # feature row per pair, not per segment list.
    accuracy = warm_start_head(classifier, (firsts, seconds), labels, (val_firsts, val_seconds),
                               val_labels, 16)
    assert accuracy >= 0.9


@pytest.mark.large
def test_head_warm_start_is_epoch_zero_of_the_recipe(sentencepiece_proto):
    classifier = _mean_pooled_classifier(sentencepiece_proto)
    texts, labels = _animal_texts(128, seed=3)
    recipe = ClassifierRecipe(epochs=2, learning_rate=1e-5, batch_size=16, head_warm_start=True,
                              validation_fraction=0.25)
    history = fine_tune_classifier(classifier, texts, labels, recipe, verbose=0).history
    probe = history["head_warm_start_val_accuracy"]
    # At this learning rate fine-tuning barely moves: the head is what learned.
    assert probe >= 0.9 and max(history["val_sparse_categorical_accuracy"]) >= 0.9
    if history.get("kept_head_warm_start"):
        assert probe >= max(history["val_sparse_categorical_accuracy"])


def test_head_warm_start_takes_a_boolean():
    with pytest.raises(ValueError, match="head_warm_start"):
        ClassifierRecipe(head_warm_start="yes").check()


def test_without_validation_the_head_is_warm_started_at_the_default_strength(sentencepiece_proto):
    from keras_albert.pipelines.classifier_fine_tuning import warm_start_head

    classifier = _mean_pooled_classifier(sentencepiece_proto)
    texts, labels = _animal_texts(128, seed=1)
    assert warm_start_head(classifier, texts, labels, [], [], 16) is None
    predicted = classifier.predict(texts, verbose=0).argmax(-1)
    assert (predicted == labels).mean() >= 0.9
