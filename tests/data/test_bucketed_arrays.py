"""NumPy length-bucketed batches: every example once an epoch, cut to its
bucket, a new seeded order each epoch."""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.data.bucketed_arrays import BucketedArrayBatches


@pytest.fixture(scope="module")
def preprocessor(sentencepiece_proto):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    return keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=64)


def _texts(count=50):
    rng = np.random.default_rng(1)
    return [" ".join(["cat"] * int(rng.integers(1, 40))) for _ in range(count)]


def test_every_example_once_per_epoch_at_its_bucket(preprocessor):
    texts = _texts()
    labels = np.arange(len(texts))
    batches = BucketedArrayBatches(preprocessor, texts, labels, batch_size=8, buckets=(16, 32), seed=3)
    full = preprocessor(texts)
    for _ in range(2):
        seen = []
        for index in range(len(batches)):
            features, y = batches[index]
            length = features["token_ids"].shape[1]
            assert length in (16, 32, 64) and len(y) <= 8
            real = features["padding_mask"].sum(-1)
            # The bucket holds each example, and no smaller bucket would.
            assert real.max() <= length
            smaller = [b for b in (16, 32, 64) if b < length]
            assert not smaller or real.min() > max(smaller)
            np.testing.assert_array_equal(features["token_ids"], np.asarray(full["token_ids"])[y, :length])
            seen += list(y)
        assert sorted(seen) == list(range(len(texts)))
        first_order = [tuple(batches[i][1]) for i in range(len(batches))]
        batches.on_epoch_end()
        assert [tuple(batches[i][1]) for i in range(len(batches))] != first_order


def test_counts_must_match(preprocessor):
    with pytest.raises(ValueError, match="`y` has 3 entries for 50 examples"):
        BucketedArrayBatches(preprocessor, _texts(), [0, 1, 2])


def test_multiple_choice_features_are_cut_on_the_sequence_axis(sentencepiece_proto):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    preprocessor = keras_albert.AlbertMultipleChoicePreprocessor(tokenizer, sequence_length=64)
    texts = _texts(20)
    x = {"context": texts, "question": ["who?"] * 20, "choices": [["a cat", "the dog"]] * 20}
    batches = BucketedArrayBatches(preprocessor, x, np.arange(20), batch_size=8, buckets=(16, 32), seed=0)
    full = {name: np.asarray(value) for name, value in preprocessor(x).items()}
    seen = []
    for index in range(len(batches)):
        features, y = batches[index]
        length = features["token_ids"].shape[-1]
        assert features["token_ids"].shape == (len(y), 2, length)
        for name, value in features.items():
            np.testing.assert_array_equal(value, full[name][y, :, :length])
        seen += list(y)
    assert sorted(seen) == list(range(20))


def test_word_lists_carry_per_piece_labels_and_weights_cut_with_the_features(sentencepiece_proto):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    preprocessor = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=64)
    words = [text.split() for text in _texts(20)]
    # Labels by position: rows that pack to equal ids get equal labels.
    labels = [[position % 3 for position in range(len(row))] for row in words]
    batches = BucketedArrayBatches(preprocessor, words, labels, batch_size=8, buckets=(16, 32), seed=0)
    features, piece_labels, weights = (np.asarray(v) if not isinstance(v, dict) else v
                                       for v in preprocessor(words, labels))
    rows = 0
    for index in range(len(batches)):
        batch, y, w = batches[index]
        length = batch["token_ids"].shape[-1]
        assert y.shape == w.shape == batch["token_ids"].shape
        # Rows are found by their token ids (the order is shuffled).
        for row_ids, row_y, row_w in zip(batch["token_ids"], y, w):
            match = np.flatnonzero((np.asarray(features["token_ids"])[:, :length] == row_ids).all(-1))[0]
            np.testing.assert_array_equal(row_y, piece_labels[match, :length])
            np.testing.assert_array_equal(row_w, weights[match, :length])
            # Every word's first piece is weighted once, however the batch is cut.
            assert row_w.sum() == min(len(words[match]), int(weights[match].sum()))
        rows += len(y)
    assert rows == 20
    with pytest.raises(ValueError, match="pass no `sample_weight`"):
        BucketedArrayBatches(preprocessor, words, labels, sample_weight=np.ones(20))


@pytest.fixture(scope="module")
def classifier(preprocessor, tiny_backbone_config):
    keras.utils.set_random_seed(0)
    config = dict(tiny_backbone_config, vocabulary_size=preprocessor.tokenizer.vocabulary_size(), max_sequence_length=64)
    model = keras_albert.AlbertClassifier(keras_albert.AlbertBackbone(**config), num_classes=3, preprocessor=preprocessor)
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def test_the_function_is_exported_beside_its_module():
    # The module was once named `bucketed_batches` too, so once imported it
    # shadowed the function of that name in `keras_albert.data`.
    import keras_albert.data.length_bucketed_batches as module
    from keras_albert.data import bucketed_batches

    assert bucketed_batches is module.bucketed_batches and callable(bucketed_batches)


def test_task_methods_take_the_batches_on_every_backend(classifier):
    # keras-hub's fit/evaluate/predict take tf.data and grain datasets only;
    # these batches (what `bucketed_batches` gives on JAX and PyTorch) go to
    # Keras's own methods.
    texts, labels = _texts(), np.arange(50) % 3
    batches = BucketedArrayBatches(classifier.preprocessor, texts, labels, batch_size=8, shuffle=False)
    order = np.concatenate([rows for rows, _ in batches.batches])
    expected = classifier.predict(texts, verbose=0)[order]
    np.testing.assert_allclose(classifier.predict(batches, verbose=0), expected, atol=1e-5)
    on_texts = classifier.evaluate(texts, labels, verbose=0, return_dict=True)
    on_batches = classifier.evaluate(batches, verbose=0, return_dict=True)
    np.testing.assert_allclose(on_batches["loss"], on_texts["loss"], rtol=1e-5)
    before = [w.copy() for w in classifier.backbone.get_weights()]
    history = classifier.fit(batches, epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1
    assert any(not np.array_equal(a, b) for a, b in zip(before, classifier.backbone.get_weights()))


class _RawTexts(keras.utils.PyDataset):
    def __len__(self):
        return 1

    def __getitem__(self, index):
        return np.array(["a raw text"]), np.array([0])


def test_a_dataset_of_raw_texts_is_refused_by_name(classifier):
    for method in (classifier.fit, classifier.evaluate, classifier.predict):
        with pytest.raises(ValueError, match=r"`x` is a _RawTexts .*packed features.*first batch holds ndarray"):
            method(_RawTexts(), verbose=0)
