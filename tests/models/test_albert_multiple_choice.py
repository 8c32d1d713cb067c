"""AlbertMultipleChoice: one score per choice, any number of choices."""

import keras
import numpy as np
import pytest

import keras_albert
from tests.conftest import _WORDS


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


def model_for(tokenizer, config, sequence_length=24):
    backbone = keras_albert.AlbertBackbone(
        **dict(config, vocabulary_size=tokenizer.vocabulary_size())
    )
    preprocessor = keras_albert.AlbertMultipleChoicePreprocessor(
        tokenizer, sequence_length=sequence_length
    )
    return keras_albert.AlbertMultipleChoice(backbone, preprocessor=preprocessor, dropout=0.0)


ANIMALS = ["cat", "dog", "bird", "fish", "horse", "mouse"]
COLOURS = ["red", "green", "blue", "small", "large", "old", "young"]


def synthetic(num_examples, num_choices, seed):
    """'Which one is an animal?': one animal among colours and sizes."""
    rng = np.random.default_rng(seed)
    fillers = [w for w in _WORDS if w not in ANIMALS + COLOURS]
    contexts, choices, answers = [], [], []
    for _ in range(num_examples):
        options = list(rng.choice(COLOURS, num_choices, replace=False))
        answer = int(rng.integers(num_choices))
        options[answer] = str(rng.choice(ANIMALS))
        contexts.append("which one is an animal " + " ".join(rng.choice(fillers, 3)))
        choices.append(options)
        answers.append(answer)
    return {"context": contexts, "choices": choices}, np.array(answers)


@pytest.mark.large
@pytest.mark.parametrize("num_choices", [2, 5])
def test_learns_a_synthetic_choice_task(tokenizer, tiny_backbone_config, num_choices):
    keras.utils.set_random_seed(0)
    model = model_for(tokenizer, tiny_backbone_config)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    x, y = synthetic(512, num_choices, seed=1)
    before = model.evaluate(x, y, batch_size=32, verbose=0, return_dict=True)
    model.fit(x, y, batch_size=32, epochs=4, verbose=0)
    x_test, y_test = synthetic(128, num_choices, seed=2)
    logits = model.predict(x_test, batch_size=32, verbose=0)
    assert logits.shape == (128, num_choices)
    accuracy = (logits.argmax(-1) == y_test).mean()
    assert accuracy >= 0.9, (before, accuracy)


def test_scores_follow_their_choices_and_the_question_fills_a_blank(tokenizer, tiny_backbone_config):
    model = model_for(tokenizer, tiny_backbone_config)
    x = {"context": ["the cat sleeps", "a dog runs"], "choices": [["cat", "dog", "fish"], ["bird", "dog", "cat"]]}
    logits = model.predict(x, verbose=0)
    permuted = {"context": x["context"], "choices": [c[::-1] for c in x["choices"]]}
    np.testing.assert_allclose(model.predict(permuted, verbose=0), logits[:, ::-1], atol=1e-5)
    # Every batch may have its own number of choices.
    assert model.predict({"context": ["a"], "choices": [["b", "c"]]}, verbose=0).shape == (1, 2)

    pre = model.preprocessor
    blank = pre({"context": ["the cat"], "question": ["the _ sleeps"], "choices": [["dog"]]})
    written = pre({"context": ["the cat"], "choices": [["the dog sleeps"]]})
    np.testing.assert_array_equal(blank["token_ids"], written["token_ids"])
    assert blank["token_ids"].shape == (1, 1, 24)


def test_bad_inputs_are_named(tokenizer, tiny_backbone_config):
    pre = model_for(tokenizer, tiny_backbone_config).preprocessor
    with pytest.raises(ValueError, match="'context'"):
        pre(["just text"])
    with pytest.raises(ValueError, match=r"\[batch, num_choices\]"):
        pre({"context": ["a"], "choices": ["b"]})
