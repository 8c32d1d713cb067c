"""AlbertCausalLM: causal masking under every sharing strategy, cached and
uncached decoding, samplers, stop tokens, batched prompts and bad input."""

import keras
import numpy as np
import pytest
from keras_hub.samplers import GreedySampler
from keras_hub.samplers import RandomSampler
from keras_hub.samplers import TopKSampler
from keras_hub.samplers import TopPSampler

import keras_albert
from keras_albert import AlbertBackbone
from keras_albert import AlbertCausalLM
from keras_albert import AlbertCausalLMPreprocessor
from keras_albert import AlbertTokenizer

SMALL = dict(
    vocabulary_size=60,
    num_layers=4,
    num_heads=2,
    embedding_dim=8,
    hidden_dim=16,
    intermediate_dim=32,
    max_sequence_length=16,
)
SHARINGS = [
    dict(sharing="all"),
    dict(sharing="all", num_groups=2, num_inner_repetitions=2),
    dict(sharing="attention", num_groups=2),
    dict(sharing="ffn"),
    dict(sharing="none"),
]


def causal_lm(seed=0, **overrides):
    keras.utils.set_random_seed(seed)
    backbone = AlbertBackbone(**{**SMALL, **overrides}, causal=True)
    model = AlbertCausalLM(backbone)
    model.compile(sampler="greedy")
    return model


def packed(prompts, width):
    token_ids = np.zeros((len(prompts), width), "int32")
    padding_mask = np.zeros((len(prompts), width), "int32")
    for row, prompt in enumerate(prompts):
        token_ids[row, : len(prompt)] = prompt
        padding_mask[row, : len(prompt)] = 1
    return {"token_ids": token_ids, "padding_mask": padding_mask}


def reference_greedy(model, prompt, width):
    """One prompt decoded alone by the full forward pass, in NumPy (the
    model's compiled predict step: an eager call costs 0.14 CPU s)."""
    tokens = list(prompt)
    while len(tokens) < width:
        x = packed([tokens], width)
        logits = keras.ops.convert_to_numpy(model.predict_on_batch(x))
        tokens.append(int(np.argmax(logits[0, len(tokens) - 1])))
    return tokens


@pytest.mark.parametrize("sharing", SHARINGS, ids=lambda s: "-".join(map(str, s.values())))
def test_no_position_sees_a_later_token(sharing):
    model = causal_lm(**sharing)
    x = packed([[2, 7, 9, 11, 13, 17]], 6)
    changed = {key: value.copy() for key, value in x.items()}
    changed["token_ids"][0, 4:] = [30, 31]
    before = keras.ops.convert_to_numpy(model(x))
    after = keras.ops.convert_to_numpy(model(changed))
    np.testing.assert_allclose(before[:, :4], after[:, :4], atol=1e-6)
    assert np.abs(before[:, 4:] - after[:, 4:]).max() > 1e-4


def test_bidirectional_backbone_sees_later_tokens():
    # The control: without `causal` the same change reaches earlier positions.
    keras.utils.set_random_seed(0)
    backbone = AlbertBackbone(**SMALL)
    x = packed([[2, 7, 9, 11, 13, 17]], 6)
    x["segment_ids"] = np.zeros_like(x["token_ids"])
    changed = {key: value.copy() for key, value in x.items()}
    changed["token_ids"][0, 4:] = [30, 31]
    before = keras.ops.convert_to_numpy(backbone(x)["sequence_output"])
    after = keras.ops.convert_to_numpy(backbone(changed)["sequence_output"])
    assert np.abs(before[:, :4] - after[:, :4]).max() > 1e-4


def test_bidirectional_backbone_is_refused():
    backbone = AlbertBackbone(**SMALL)
    with pytest.raises(ValueError, match="causal=True") as error:
        AlbertCausalLM(backbone)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("sharing", SHARINGS, ids=lambda s: "-".join(map(str, s.values())))
def test_cached_steps_give_the_full_pass_logits(sharing):
    model = causal_lm(**sharing)
    x = packed([[2, 7, 9, 11, 13, 17, 19, 23]], 8)
    full = keras.ops.convert_to_numpy(model(x))
    # Seed with the first three positions, then one position per call.
    _, cache = model._build_cache(x["token_ids"])
    cache = keras.ops.zeros_like(cache)
    logits, _, cache = model.call_with_cache(x["token_ids"][:, :3], cache, 0)
    steps = [keras.ops.convert_to_numpy(logits)]
    for index in range(3, 8):
        logits, _, cache = model.call_with_cache(x["token_ids"][:, index : index + 1], cache, index)
        steps.append(keras.ops.convert_to_numpy(logits))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)


@pytest.mark.parametrize("sharing", SHARINGS[:2], ids=lambda s: "-".join(map(str, s.values())))
def test_batched_prompts_of_different_lengths_cached_and_uncached(sharing):
    model = causal_lm(**sharing)
    prompts = [[2, 7, 9, 11], [2, 5], [2, 40, 41, 42, 43, 44]]
    x = packed(prompts, 12)
    cached = model.generate(x, stop_token_ids=None)
    uncached = model.generate(x, stop_token_ids=None, use_cache=False)
    np.testing.assert_array_equal(cached["token_ids"], uncached["token_ids"])
    for row, prompt in enumerate(prompts):
        assert list(cached["token_ids"][row]) == reference_greedy(model, prompt, 12)
    assert np.asarray(cached["padding_mask"]).all()
    # Switching modes keeps each mode's compiled function.
    compiled_without_cache = model.generate_function
    model.generate(x, stop_token_ids=None, use_cache=True)
    assert model.generate_function is not compiled_without_cache
    model.generate(x, stop_token_ids=None, use_cache=False)
    assert model.generate_function is compiled_without_cache


@pytest.mark.large
def test_seeded_samplers_give_the_same_tokens_with_and_without_cache():
    model = causal_lm()
    x = packed([[2, 7, 9], [2, 5, 6, 8]], 12)
    for make in (
        lambda: TopKSampler(k=5, seed=3, temperature=0.7),
        lambda: TopPSampler(p=0.9, seed=3, temperature=1.3),
        lambda: RandomSampler(seed=3, temperature=2.0),
    ):
        model.compile(sampler=make())
        cached = model.generate(x, stop_token_ids=None)["token_ids"]
        model.compile(sampler=make())
        uncached = model.generate(x, stop_token_ids=None, use_cache=False)["token_ids"]
        np.testing.assert_array_equal(cached, uncached)


@pytest.mark.large
def test_samplers_follow_their_rule():
    model = causal_lm()
    x = packed([[2, 7, 9], [2, 5, 6, 8]], 12)
    greedy = model.generate(x, stop_token_ids=None)["token_ids"]
    # k=1, a tiny p or a near-zero temperature leave only the argmax.
    for sampler in (
        TopKSampler(k=1, seed=1),
        TopPSampler(p=1e-6, seed=1),
        RandomSampler(seed=1, temperature=1e-7),
    ):
        model.compile(sampler=sampler)
        np.testing.assert_array_equal(model.generate(x, stop_token_ids=None)["token_ids"], greedy)
    # A flat distribution (high temperature) strays from the argmax, and
    # top-k keeps each token among the k most likely.
    model.compile(sampler=RandomSampler(seed=1, temperature=100.0))
    hot = np.asarray(model.generate(x, stop_token_ids=None)["token_ids"])
    assert (hot != np.asarray(greedy)).any()
    model.compile(sampler=TopKSampler(k=3, seed=5, temperature=5.0))
    top3 = np.asarray(model.generate(x, stop_token_ids=None)["token_ids"])
    # Each prefix alone, padded to the window: all in one forward pass.
    prefixes = [(row, index) for row in range(2) for index in range(int(x["padding_mask"][row].sum()), 12)]
    logits = keras.ops.convert_to_numpy(model(packed([list(top3[row, :index]) for row, index in prefixes], 12)))
    for (row, index), prefix_logits in zip(prefixes, logits, strict=True):
        assert top3[row, index] in np.argsort(prefix_logits[index - 1])[-3:]


def test_stop_tokens_end_each_row():
    model = causal_lm()
    prompts = [[2, 7, 9, 11], [2, 5]]
    x = packed(prompts, 12)
    free = np.asarray(model.generate(x, stop_token_ids=None)["token_ids"])
    # Stop on the first token row 0 generates.
    stop = int(free[0, 4])
    out = model.generate(x, stop_token_ids=[stop])
    tokens, mask = np.asarray(out["token_ids"]), np.asarray(out["padding_mask"])
    for row, prompt in enumerate(prompts):
        generated = list(free[row, len(prompt):])
        if stop in generated:
            end = len(prompt) + generated.index(stop)
            assert mask[row, : end + 1].all() and not mask[row, end + 1 :].any()
            np.testing.assert_array_equal(tokens[row, : end + 1], free[row, : end + 1])
        else:
            assert mask[row].all()
    assert not mask[0, 5:].any()


@pytest.fixture(scope="module")
def text_model(sentencepiece_proto):
    keras.utils.set_random_seed(0)
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto)
    backbone = AlbertBackbone(
        **{**SMALL, "vocabulary_size": tokenizer.vocabulary_size(), "max_sequence_length": 24},
        causal=True,
    )
    preprocessor = AlbertCausalLMPreprocessor(tokenizer, sequence_length=16)
    model = AlbertCausalLM(backbone, preprocessor=preprocessor)
    model.compile(sampler="greedy")
    return model


def test_text_prompts_round_trip(text_model):
    outputs = text_model.generate(["the cat", "emma walks to the river"], max_length=12)
    assert outputs[0].startswith("the cat") and outputs[1].startswith("emma walks to the river")
    single = text_model.generate("the cat", max_length=12)
    assert single == outputs[0]
    stripped = text_model.generate("the cat", max_length=12, strip_prompt=True)
    assert not stripped.startswith("the cat")


def test_preprocessor_shifts_targets(text_model):
    x, y, weights = text_model.preprocessor(["the cat sees the dog"])
    token_ids = np.asarray(x["token_ids"])
    np.testing.assert_array_equal(token_ids[:, 1:], np.asarray(y)[:, :-1])
    assert token_ids[0, 0] == text_model.preprocessor.tokenizer.start_token_id
    assert np.asarray(x["padding_mask"]).dtype == np.int32
    # Every real token but the last ([SEP]) has a target.
    assert np.asarray(weights).sum() == np.asarray(x["padding_mask"]).sum() - 1
    assert np.asarray(y)[0, np.asarray(weights)[0].sum() - 1] == text_model.preprocessor.tokenizer.end_token_id



def test_tokens_that_stand_for_no_text_are_never_generated(sentencepiece_proto):
    """`<unk>` (and pad, [CLS], [MASK]) made the likeliest next token: text
    decoding picks something else, cached or not; packed ids without a
    preprocessor decode as the logits say."""
    keras.utils.set_random_seed(0)
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto)
    backbone = AlbertBackbone(
        **{**SMALL, "vocabulary_size": tokenizer.vocabulary_size(), "max_sequence_length": 24},
        causal=True,
    )
    model = AlbertCausalLM(backbone, AlbertCausalLMPreprocessor(tokenizer, sequence_length=16))
    model.compile(sampler="greedy")
    never = model.never_generate_ids()
    assert never == sorted({tokenizer.pad_token_id, tokenizer.unk_token_id,
                            tokenizer.start_token_id, tokenizer.mask_token_id})
    assert tokenizer.end_token_id not in never
    bias = np.zeros(tokenizer.vocabulary_size(), "float32")
    bias[tokenizer.unk_token_id] = 100.0  # outweighs every other logit
    bias[tokenizer.end_token_id] = -100.0  # and rows run to max_length
    model.lm_head.output_bias.assign(bias)
    prompt = model.preprocessor.generate_preprocess(["the cat"], sequence_length=12)
    start = int(np.asarray(prompt["padding_mask"]).sum())  # the first generated position
    for use_cache in (True, False):
        text = model.generate("the cat", max_length=12, use_cache=use_cache)
        assert "\u2047" not in text and len(text) > len("the cat"), text  # ⁇: unk's text
        ids = np.asarray(model.generate_step(
            {k: np.asarray(v) for k, v in prompt.items()},
            stop_token_ids=[tokenizer.end_token_id])["token_ids"])[0]
        assert not set(ids[start:].tolist()) & set(never), ids
    bare = AlbertCausalLM(backbone)
    bare.lm_head.output_bias.assign(bias)
    bare.compile(sampler="greedy")
    packed_prompt = {k: np.asarray(v) for k, v in prompt.items()}
    ids = np.asarray(bare.generate(packed_prompt, stop_token_ids=None)["token_ids"])[0]
    assert (ids[start:] == tokenizer.unk_token_id).all(), ids  # no tokenizer: nothing ruled out

@pytest.mark.large
def test_fit_learns_a_text_it_then_generates(sentencepiece_proto):
    keras.utils.set_random_seed(1)
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto)
    backbone = AlbertBackbone(
        **{**SMALL, "vocabulary_size": tokenizer.vocabulary_size()}, causal=True
    )
    model = AlbertCausalLM(backbone, AlbertCausalLMPreprocessor(tokenizer, sequence_length=12))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), sampler="greedy")
    history = model.fit(["the cat sees the dog"] * 8, batch_size=8, epochs=40, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.25 * losses[0]
    # Greedy decoding continues the prompt as learned, and stops at [SEP].
    assert model.generate("the cat", max_length=12) == "the cat sees the dog"


def test_saved_model_generates_the_same(tmp_path):
    model = causal_lm(sharing="attention", num_groups=2)
    x = packed([[2, 7, 9], [2, 5, 6, 8]], 10)
    path = tmp_path / "causal_lm.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    loaded.compile(sampler="greedy")
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(loaded(x)), keras.ops.convert_to_numpy(model(x)), atol=1e-6
    )
    np.testing.assert_array_equal(
        loaded.generate(x, stop_token_ids=None)["token_ids"],
        model.generate(x, stop_token_ids=None)["token_ids"],
    )
    assert loaded.backbone.get_config() == model.backbone.get_config()


def test_exported_at_the_top_level():
    assert keras_albert.models.AlbertCausalLM is AlbertCausalLM
    assert keras_albert.models.AlbertCausalLMPreprocessor is AlbertCausalLMPreprocessor


# Bad input: one line each, raised before any decoding.


def _refused(model, match, *args, **kwargs):
    model.generate_function = None
    with pytest.raises(ValueError, match=match) as error:
        model.generate(*args, **kwargs)
    assert "\n" not in str(error.value)
    assert model.generate_function is None, "decoding started"


@pytest.mark.parametrize(
    "prompts, match",
    [("", "Prompt 0 is empty"), (["the cat", "   "], "Prompt 1 is empty"), ([], "no prompts")],
)
def test_empty_prompts_are_refused(text_model, prompts, match):
    _refused(text_model, match, prompts, max_length=12)


def test_prompt_longer_than_the_window_is_refused(text_model):
    long_prompt = " ".join(["the cat sees the dog"] * 10)
    _refused(text_model, "more than the model's window of 24 positions", long_prompt, max_length=20)


def test_max_length_below_the_prompt_is_refused(text_model):
    _refused(text_model, "max_length.*must exceed every prompt's length", "emma walks to the river", max_length=4)
    _refused(text_model, "between 2 and the model's 24 positions", "the cat", max_length=40)
    _refused(text_model, "must be an integer", "the cat", max_length="12")


def test_empty_packed_prompt_is_refused():
    model = causal_lm()
    _refused(model, "Prompt 1 is empty", packed([[2, 7], []], 8), stop_token_ids=None)


@pytest.mark.parametrize("sampler", ["beam_search", "Greedy", 3])
def test_unknown_sampler_is_refused(sampler):
    model = causal_lm()
    with pytest.raises(ValueError, match="`sampler` must be one of") as error:
        model.compile(sampler=sampler)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("temperature", [-1.0, 0.0, float("nan")])
def test_non_positive_temperature_is_refused(temperature):
    model = causal_lm()
    with pytest.raises(ValueError, match="`temperature` must be a positive number") as error:
        model.compile(sampler=GreedySampler(temperature=temperature))
    assert "\n" not in str(error.value)


@pytest.mark.large
def test_generation_compiles_under_xla():
    # Static shapes and int32 indices: the cached and uncached loops compile
    # with jit_compile=True (TPU readiness) and decode the same tokens.
    model = causal_lm(sharing="all", num_groups=2, num_inner_repetitions=2)
    x = packed([[2, 7, 9, 11], [2, 5]], 10)
    expected = np.asarray(model.generate(x, stop_token_ids=None)["token_ids"])
    model.compile(sampler="greedy", jit_compile=True)
    for use_cache in (True, False):
        tokens = model.generate(x, stop_token_ids=None, use_cache=use_cache)["token_ids"]
        np.testing.assert_array_equal(tokens, expected)
