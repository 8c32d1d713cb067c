"""`keras_albert.models` / `keras_albert.tokenizers` mirror keras-hub's
namespaces: code written for keras-hub's ALBERT ports by changing the
import."""

import keras_hub
import numpy as np
import pytest

import keras_albert
from keras_albert import models
from keras_albert import tokenizers


def _albert_names(module):
    return sorted(name for name in dir(module) if name.startswith("Albert"))


def test_every_keras_hub_albert_name_exists_and_is_ours():
    for hub_module, ours in ((keras_hub.models, models), (keras_hub.tokenizers, tokenizers)):
        for name in _albert_names(hub_module):
            cls = getattr(ours, name, None)
            assert cls is not None, f"keras_albert.{ours.__name__} lacks {name}"
            assert cls.__module__.startswith("keras_albert."), (name, cls.__module__)


def test_keras_hub_aliases_point_at_our_classes():
    assert models.AlbertTextClassifier is models.AlbertClassifier is keras_albert.AlbertClassifier
    assert models.AlbertPreprocessor is models.AlbertTextClassifierPreprocessor
    assert tokenizers.AlbertTokenizer is models.AlbertTokenizer is keras_albert.AlbertTokenizer
    assert keras_albert.AlbertTextClassifier is models.AlbertClassifier
    # The implementation modules stay importable where they were.
    from keras_albert.models.albert_classifier import AlbertClassifier

    assert AlbertClassifier is models.AlbertTextClassifier


# Written against keras-hub's public API, run once as written and once with
# `keras_hub` swapped for `keras_albert`.
SNIPPET = """
import keras_hub

tokenizer = keras_hub.tokenizers.AlbertTokenizer(proto=proto)
backbone = keras_hub.models.AlbertBackbone(
    vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_heads=2,
    embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=16)
preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
    tokenizer=tokenizer, sequence_length=16)
classifier = keras_hub.models.AlbertTextClassifier(
    backbone=backbone, preprocessor=preprocessor, num_classes=3)
classifier.fit(x=texts, y=[0, 1, 2, 1], batch_size=2, epochs=1, verbose=0)
class_scores = classifier.predict(texts, verbose=0)

masked_lm = keras_hub.models.AlbertMaskedLM(
    backbone=backbone,
    preprocessor=keras_hub.models.AlbertMaskedLMPreprocessor(
        tokenizer=tokenizer, sequence_length=16))
masked_lm.fit(x=texts, batch_size=2, epochs=1, verbose=0)
features = preprocessor(texts)
sequence_output = backbone(features)["sequence_output"]
pieces = tokenizer.detokenize(tokenizer(texts))
"""


def _run(snippet, proto, texts):
    scope = {"proto": proto, "texts": texts}
    exec(compile(snippet, "<keras-hub snippet>", "exec"), scope)
    return scope


@pytest.mark.large
@pytest.mark.parametrize("library", ["keras_hub", "keras_albert"])
def test_keras_hub_snippet_runs_with_either_import(library, sentencepiece_proto):
    texts = ["the cat sees a bird.", "emma walks to the river.",
             "a small red house.", "the dog runs quickly."]
    scope = _run(SNIPPET.replace("keras_hub", library), sentencepiece_proto, texts)
    assert type(scope["classifier"]).__module__.startswith(library)
    assert scope["class_scores"].shape == (4, 3)
    assert tuple(scope["sequence_output"].shape) == (4, 16, 16)
    assert len(scope["pieces"]) == 4
    assert np.isfinite(scope["class_scores"]).all()
