"""Each task's `serving_signature`: its inputs, and outputs equal to Keras'.

Run eagerly here; tests/export writes the same signatures out as
SavedModels and checks them after loading.

TensorFlow only (serving signatures are tf.functions); skipped without it.
"""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="serving signatures are TensorFlow's")

import keras_albert  # noqa: E402
from keras_albert.models.length_buckets import unbucketed  # noqa: E402
from keras_albert.serving.serving_signature import ServingSignature  # noqa: E402
from keras_albert.serving.serving_signature import logit_outputs  # noqa: E402
from keras_albert.serving.task_signatures import serving_signature  # noqa: E402

TEXTS = ["the cat sleeps.", "emma walks slowly to the garden", "", "dog " * 40]


@pytest.fixture(scope="module")
def parts(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    config = dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
    return tokenizer, keras_albert.AlbertBackbone(**config)


def served(signature):
    assert isinstance(signature, ServingSignature)
    assert [spec.name for spec in signature.input_specs] == list(signature.example_inputs)
    assert all(spec.dtype == tf.string for spec in signature.input_specs)
    outputs = signature.serve(**signature.example_inputs)
    return {name: np.asarray(value) for name, value in outputs.items()}


def assert_matches_expected(signature, outputs, atol=1e-5):
    for name, value in signature.expected_outputs().items():
        np.testing.assert_allclose(outputs[name], value, atol=atol)


def test_logit_outputs_squash_classifiers_only():
    logits = tf.constant([[1.0, 2.0, 3.0]], tf.float16)
    outputs = logit_outputs(logits)
    assert outputs["logits"].dtype == tf.float32
    np.testing.assert_allclose(np.sum(outputs["probabilities"], -1), 1.0, rtol=1e-6)
    assert set(logit_outputs(logits, regression=True)) == {"logits"}


@pytest.mark.parametrize("num_classes,pair", [(3, False), (1, False), (2, True)])
def test_classifier_signature(parts, num_classes, pair):
    tokenizer, backbone = parts
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    task = keras_albert.AlbertClassifier(backbone, num_classes=num_classes, preprocessor=pre)
    signature = serving_signature(task, TEXTS, length_buckets=(4, 8), pair=pair)
    assert list(signature.example_inputs) == (["text", "text_pair"] if pair else ["text"])
    outputs = served(signature)
    assert set(outputs) == ({"logits"} if num_classes == 1 else {"logits", "probabilities"})
    with unbucketed(task):
        assert_matches_expected(signature, outputs)


def test_classifier_signature_checks_its_arguments(parts):
    tokenizer, backbone = parts
    task = keras_albert.AlbertClassifier(backbone, num_classes=2)
    with pytest.raises(ValueError, match="preprocessor=None"):
        serving_signature(task, TEXTS)
    task.preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    with pytest.raises(ValueError, match="length_buckets"):
        serving_signature(task, TEXTS, length_buckets=[1])


def test_multiple_choice_signature(parts):
    tokenizer, backbone = parts
    pre = keras_albert.AlbertMultipleChoicePreprocessor(tokenizer, sequence_length=16)
    task = keras_albert.AlbertMultipleChoice(backbone, preprocessor=pre)
    signature = serving_signature(task, TEXTS, length_buckets=(8,))
    assert list(signature.example_inputs) == ["context", "question", "choices"]
    assert signature.input_specs[2].shape.rank == 2  # [batch, num_choices]
    outputs = served(signature)
    assert outputs["logits"].shape == (len(TEXTS), 2)
    with unbucketed(task):
        assert_matches_expected(signature, outputs)


def test_token_classifier_signature(parts):
    tokenizer, backbone = parts
    pre = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=16)
    task = keras_albert.AlbertTokenClassifier(backbone, num_classes=3, preprocessor=pre)
    signature = serving_signature(task, TEXTS)
    assert list(signature.example_inputs) == ["text"]
    outputs = served(signature)
    assert_matches_expected(signature, outputs)
    assert outputs["logits"].shape == (len(TEXTS), 16, 3)
    np.testing.assert_array_equal(outputs["predictions"], outputs["logits"].argmax(-1))
    word_ids = outputs["word_ids"][0]
    labels = outputs["predictions"][0][word_ids >= 0].tolist()
    assert labels == task.predict_word_labels([TEXTS[0].split()])[0]


def test_question_answerer_signature(parts, tiny_backbone_config):
    tokenizer, _ = parts
    backbone = keras_albert.AlbertBackbone(**dict(
        tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    pre = keras_albert.AlbertQuestionAnswererPreprocessor(tokenizer, sequence_length=32, doc_stride=8)
    task = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=pre)
    # Spread the span scores: near-ties could pick different spans.
    task.span_dense.kernel.assign(np.random.default_rng(0).normal(0, 1.0, task.span_dense.kernel.shape))
    signature = serving_signature(task, TEXTS)
    assert list(signature.example_inputs) == ["question", "context"]
    outputs = served(signature)
    assert_matches_expected(signature, outputs, atol=1e-4)
    contexts = signature.example_inputs["context"].numpy()
    for context, answer, start, end in zip(
        contexts, outputs["answer"], outputs["answer_start_byte"], outputs["answer_end_byte"]
    ):
        assert answer == context[start:end]  # a byte-exact substring
