"""Task presets hold the model, not the optimizer's training state."""

import h5py
import keras
import numpy as np
import pytest

import keras_albert


def trained_classifier(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    classifier = keras_albert.AlbertClassifier(
        keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())),
        num_classes=2,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=8),
    )
    classifier.compile(optimizer=keras.optimizers.Adam(1e-3))
    classifier.fit(["a cat", "the dog"] * 4, [0, 1] * 4, batch_size=4, verbose=0)
    return classifier


@pytest.mark.large
def test_saved_task_weights_hold_no_optimizer_state(tmp_path, sentencepiece_proto, tiny_backbone_config, recwarn):
    classifier = trained_classifier(sentencepiece_proto, tiny_backbone_config)
    assert classifier.optimizer.variables  # Adam's moments exist
    classifier.save_to_preset(str(tmp_path))
    with h5py.File(tmp_path / "task.weights.h5") as weights:
        assert "optimizer" not in weights
        assert "layers" in weights
    restored = keras_albert.AlbertClassifier.from_preset(str(tmp_path))
    assert not [w for w in recwarn if "optimizer" in str(w.message)]
    texts = ["a cat sees the dog", "the dog"]
    np.testing.assert_allclose(restored.predict(texts, verbose=0), classifier.predict(texts, verbose=0), atol=1e-6)


@pytest.mark.large
def test_presets_with_optimizer_state_still_load(tmp_path, sentencepiece_proto, tiny_backbone_config):
    classifier = trained_classifier(sentencepiece_proto, tiny_backbone_config)
    classifier.save_to_preset(str(tmp_path))
    # A preset written by keras-hub's own save_task_weights, optimizer included.
    keras.saving.save_weights(classifier, str(tmp_path / "task.weights.h5"),
                              objects_to_skip=list(classifier.backbone._flatten_layers()))
    with h5py.File(tmp_path / "task.weights.h5") as weights:
        assert "optimizer" in weights
    restored = keras_albert.AlbertClassifier.from_preset(str(tmp_path))
    np.testing.assert_allclose(restored.output_dense.get_weights()[0], classifier.output_dense.get_weights()[0])
