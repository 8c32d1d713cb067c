"""AlbertCausalLM: GPT-2-style next-token prediction on ALBERT's shared weights."""

import math

import keras
import numpy as np
from keras import ops
from keras_hub.models import CausalLM
from keras_hub.samplers import Sampler
from keras_hub.samplers import get as get_sampler

from keras_albert.layers.causal_lm_head import AlbertCausalLMHead
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_causal_lm_preprocessor import AlbertCausalLMPreprocessor
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.presets.preset_resolution import PresetResolutionMixin

# keras-hub's samplers that decode one token per step from `next` alone.
SAMPLER_NAMES = ("greedy", "top_k", "top_p", "random")


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertCausalLM(CompileConfigMixin, PresetResolutionMixin, CausalLM):
    """Causal language model: a causal `AlbertBackbone` and a tied output.

    The backbone must be built with `causal=True`: every position attends
    to itself and earlier positions, whatever the sharing strategy, so one
    set of shared block weights runs as a GPT-2-style decoder. Logits are
    `AlbertCausalLMHead`'s: H -> E, then the transposed V x E word
    embeddings (the output embedding is the input one).

    `generate()` is keras-hub's (`compile(sampler=...)` picks greedy,
    top-k, top-p or random sampling, each with a `temperature`); decoding
    keeps a key/value cache so each new token runs one position through
    the stack. With a preprocessor, decoding never picks the tokenizer's
    `<pad>`, `<unk>`, `[CLS]` or `[MASK]` (they stand for no text;
    `[SEP]` ends a row); `never_generate_ids()` lists them. `generate(..., use_cache=False)` recomputes the whole window
    at every step instead (same tokens, for checking and benchmarks).
    On PyTorch, `compile(jit_compile=True)` runs each decoding step through
    `torch.compile` (one graph for every step; the first call compiles);
    the default decodes eagerly, as keras-hub does there.

    Inputs are `token_ids` and `padding_mask` [batch, seq] (int32); the
    output is logits [batch, seq, vocabulary_size].

    Example:
    >>> backbone = keras_albert.AlbertBackbone(
    ...     vocabulary_size=50, num_layers=2, num_heads=2, embedding_dim=8,
    ...     hidden_dim=16, intermediate_dim=32, max_sequence_length=12,
    ...     causal=True)
    >>> causal_lm = keras_albert.AlbertCausalLM(backbone)
    >>> causal_lm.compile(sampler="greedy")
    >>> prompt = {"token_ids": np.array([[2, 7, 9, 0, 0, 0]]),
    ...           "padding_mask": np.array([[1, 1, 1, 0, 0, 0]])}
    >>> tuple(causal_lm.generate(prompt, stop_token_ids=None)["token_ids"].shape)
    (1, 6)
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertCausalLMPreprocessor

    def __init__(self, backbone, preprocessor=None, **kwargs):
        if not isinstance(backbone, AlbertBackbone) or not backbone.causal:
            raise ValueError(
                "`backbone` must be an `AlbertBackbone` built with causal=True "
                "(a bidirectional encoder would see the tokens it predicts). "
                f"Received: {_describe_backbone(backbone)}"
            )
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.lm_head = AlbertCausalLMHead(
            backbone.token_embedding,
            initializer_range=backbone.initializer_range,
            dtype=backbone.dtype_policy,
            name="lm_head",
        )

        # === Functional model ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input(shape=(None,), dtype="int32", name="padding_mask")
        sequence_output = backbone(
            {
                "token_ids": token_ids,
                # One segment: a causal LM reads a single stream.
                "segment_ids": ops.zeros_like(token_ids),
                "padding_mask": padding_mask,
            }
        )["sequence_output"]
        logits = self.lm_head(sequence_output)
        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs=logits,
            **kwargs,
        )

        # === Config ===
        self.use_cache = True
        self._other_generate_functions = {}
        self._torch_compiled = {}

    def compile(self, *args, sampler="top_k", **kwargs):
        """keras-hub's `CausalLM.compile`; `sampler` is a name in
        `SAMPLER_NAMES` or a `keras_hub.samplers.Sampler` with a positive
        `temperature`."""
        check_sampler(sampler)
        super().compile(*args, sampler=sampler, **kwargs)
        # Compiled generate functions of the other cache mode (see `generate`).
        self._other_generate_functions = {}
        self._torch_compiled = {}

    def _decoding_function(self, function):
        """`function` (one decoding step's model call) through
        `torch.compile` when this model was compiled with
        `jit_compile=True` on PyTorch; as is otherwise.

        keras-hub's `generate` runs eagerly on PyTorch, where a one-token
        step is mostly Python dispatch. The step takes the decoding index
        as a tensor and every shape is fixed, so one graph serves every
        step and every later call of the same batch and window.
        """
        if keras.config.backend() != "torch" or getattr(self, "jit_compile", False) is not True:
            return function
        name = function.__name__
        if name not in self._torch_compiled:
            import torch

            self._torch_compiled[name] = torch.compile(function, dynamic=False)
        return self._torch_compiled[name]

    def call_with_cache(self, token_ids, cache, cache_update_index):
        """Logits, hidden states and the updated cache for `token_ids`
        [batch, new] placed at `cache_update_index`.

        `cache` is [batch, num_cached_blocks, 2, max_length, heads,
        head_dim] (see `AlbertEncoder.call_with_cache`).
        """
        x = self.backbone.embeddings(
            token_ids, ops.zeros_like(token_ids), start_index=cache_update_index
        )
        hidden_states, cache = self.backbone.encoder.call_with_cache(
            x, cache, cache_update_index
        )
        return self.lm_head(hidden_states), hidden_states, cache

    def _build_cache(self, token_ids):
        """Seeds a cache with one pass over the whole padded window.

        Causal attention keeps every position blind to the padding after
        it, and each padded slot's keys are rewritten when its token is
        decoded.
        """
        encoder = self.backbone.encoder
        shape = ops.shape(token_ids)
        cache = ops.zeros(
            [
                shape[0],
                encoder.num_cached_blocks,
                2,
                shape[1],
                encoder.num_heads,
                encoder.hidden_dim // encoder.num_heads,
            ],
            dtype=self.compute_dtype,
        )
        _, hidden_states, cache = self.call_with_cache(token_ids, cache, 0)
        return hidden_states, cache

    def _full_window_logits(self, token_ids):
        """Logits and hidden states of every position, no cache."""
        x = self.backbone.embeddings(token_ids, ops.zeros_like(token_ids))
        hidden_states = self.backbone.encoder(x)[-1]
        return self.lm_head(hidden_states), hidden_states

    def never_generate_ids(self):
        """The ids decoding never picks: the preprocessor's tokenizer's
        padding, unknown, start and mask tokens (none without one). A
        corpus with characters the vocabulary lacks teaches `<unk>` as a
        likely next token; its text would print as a placeholder."""
        tokenizer = getattr(self.preprocessor, "tokenizer", None)
        if tokenizer is None:
            return []
        ids = [getattr(tokenizer, name, None)
               for name in ("pad_token_id", "unk_token_id", "start_token_id", "mask_token_id")]
        end = getattr(tokenizer, "end_token_id", None)
        return sorted({int(i) for i in ids if i is not None and i != end})

    def _logit_offsets(self):
        """[vocabulary] float32: a large negative number at the ids decoding
        never picks, 0 elsewhere; None when there are none."""
        ids = self.never_generate_ids()
        if not ids:
            return None
        offsets = np.zeros(self.backbone.vocabulary_size, "float32")
        offsets[ids] = -1e9
        return ops.convert_to_tensor(offsets)

    def generate_step(self, inputs, stop_token_ids=None):
        """Decodes one batch of packed prompts (keras-hub's contract: a dict
        of `token_ids` and `padding_mask`, True/1 on prompt tokens)."""
        offsets = self._logit_offsets()

        def allowed(logits):
            # float32 so the offset is no overflow in float16 logits.
            return logits if offsets is None else ops.cast(logits, "float32") + offsets

        token_ids = inputs["token_ids"]
        padding_mask = ops.cast(inputs["padding_mask"], "bool")
        # Decoding starts after the shortest prompt; longer prompts keep
        # their own tokens until they run out (the sampler's `mask`).
        index = ops.min(ops.sum(ops.cast(padding_mask, "int32"), axis=-1))
        if self.use_cache:
            hidden_states, cache = self._build_cache(token_ids)
            step = self._decoding_function(self.call_with_cache)

            def next(prompt, cache, index):
                batch_size = ops.shape(prompt)[0]
                last = ops.slice(prompt, [0, index - 1], [batch_size, 1])
                logits, hidden_states, cache = step(last, cache, index - 1)
                return allowed(logits[:, 0]), hidden_states[:, 0], cache

        else:
            hidden_states, cache = None, None
            window = self._decoding_function(self._full_window_logits)

            def next(prompt, cache, index):
                logits, hidden_states = window(prompt)
                last = ops.expand_dims(index - 1, 0)
                return (
                    allowed(ops.take(logits, last, axis=1)[:, 0]),
                    ops.take(hidden_states, last, axis=1)[:, 0],
                    cache,
                )

        token_ids = self.sampler(
            next=next,
            prompt=token_ids,
            cache=cache,
            index=index,
            mask=padding_mask,
            stop_token_ids=stop_token_ids,
            hidden_states=hidden_states,
            model=self,
        )
        return {
            "token_ids": token_ids,
            "padding_mask": generated_mask(token_ids, padding_mask, stop_token_ids),
        }

    def generate(
        self,
        inputs,
        max_length=None,
        stop_token_ids="auto",
        strip_prompt=False,
        use_cache=True,
    ):
        """keras-hub's `CausalLM.generate`, with the inputs checked first.

        Prompts (strings, or packed `token_ids`/`padding_mask` without a
        preprocessor) must be non-empty and leave room for at least one new
        token: `max_length` (default: the preprocessor's `sequence_length`)
        must exceed every prompt's length and fit the model's positions.
        Each problem is one `ValueError` line, raised before any decoding.
        `use_cache=False` decodes without the key/value cache.
        """
        if not isinstance(use_cache, bool):
            raise ValueError(
                f"`use_cache` must be True or False. Received: use_cache={use_cache!r}"
            )
        self.check_generate_inputs(inputs, max_length)
        if use_cache != self.use_cache:
            # Each mode keeps its compiled function, so switching back and
            # forth does not trace again.
            stash = self._other_generate_functions
            stash[self.use_cache] = self.generate_function
            self.use_cache = use_cache
            self.generate_function = stash.pop(use_cache, None)
        return super().generate(
            inputs,
            max_length=max_length,
            stop_token_ids=stop_token_ids,
            strip_prompt=strip_prompt,
        )

    def check_generate_inputs(self, inputs, max_length=None):
        """Raises `generate`'s one-line ValueError for bad prompts or
        `max_length`, without decoding anything."""
        window = self.backbone.max_sequence_length
        if isinstance(inputs, dict):
            if max_length is not None:
                raise ValueError(
                    "`max_length` applies to text prompts; packed inputs "
                    "decode up to their own width. Received: "
                    f"max_length={max_length!r} with a dict of arrays"
                )
            lengths = _packed_prompt_lengths(inputs)
            max_length = int(np.shape(inputs["token_ids"])[-1])
        elif _is_text_batch(inputs):
            prompts = [inputs] if isinstance(inputs, (str, bytes)) else list(inputs)
            if self.preprocessor is None:
                raise ValueError(
                    "Text prompts need a preprocessor; this AlbertCausalLM has "
                    "none. Pass packed `token_ids` and `padding_mask` instead."
                )
            if not prompts:
                raise ValueError("`inputs` holds no prompts. Received: inputs=[]")
            for number, prompt in enumerate(prompts):
                text = prompt.decode("utf-8", "replace") if isinstance(prompt, bytes) else prompt
                if not text.strip():
                    raise ValueError(
                        f"Prompt {number} is empty; every prompt needs some "
                        f"text to continue. Received: {prompt!r}"
                    )
            if max_length is None:
                max_length = self.preprocessor.sequence_length
            lengths = self.preprocessor.prompt_lengths(prompts)
        else:
            # Datasets and tensors go to keras-hub unchecked.
            return
        if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)):
            raise ValueError(
                f"`max_length` must be an integer. Received: max_length={max_length!r}"
            )
        if not 2 <= max_length <= window:
            raise ValueError(
                f"`max_length` must be between 2 and the model's "
                f"{window} positions. Received: max_length={max_length}"
            )
        for number, length in enumerate(lengths):
            if length > window:
                raise ValueError(
                    f"Prompt {number} has {length} tokens, more than the "
                    f"model's window of {window} positions; shorten it."
                )
            if length >= max_length:
                raise ValueError(
                    f"`max_length` must exceed every prompt's length (prompt "
                    f"{number} has {length} tokens), to leave room for new "
                    f"ones. Received: max_length={max_length}"
                )


def generated_mask(token_ids, prompt_mask, stop_token_ids):
    """True on the prompt and the generated tokens up to and including the
    first stop token after each prompt (keras-hub's output convention)."""
    if stop_token_ids is None:
        return ops.ones_like(token_ids, dtype="bool")
    is_stop = ops.zeros_like(token_ids, dtype="bool")
    for stop_token_id in stop_token_ids:
        is_stop = ops.logical_or(is_stop, ops.equal(token_ids, stop_token_id))
    is_end = ops.cast(ops.logical_and(is_stop, ops.logical_not(prompt_mask)), "int32")
    after_end = ops.cumsum(is_end, axis=-1) - is_end
    return ops.logical_not(ops.cast(after_end, "bool"))


def check_sampler(sampler):
    """A sampler name in `SAMPLER_NAMES` or a keras-hub `Sampler` whose
    `temperature` is a positive number; one line otherwise."""
    if isinstance(sampler, str):
        if sampler not in SAMPLER_NAMES:
            raise ValueError(
                f"`sampler` must be one of {SAMPLER_NAMES} or a "
                f"`keras_hub.samplers.Sampler`. Received: sampler={sampler!r}"
            )
        sampler = get_sampler(sampler)
    if not isinstance(sampler, Sampler):
        raise ValueError(
            f"`sampler` must be one of {SAMPLER_NAMES} or a "
            f"`keras_hub.samplers.Sampler`. Received: sampler={sampler!r}"
        )
    check_temperature(sampler.temperature)


def check_temperature(temperature):
    valid = (
        not isinstance(temperature, bool)
        and isinstance(temperature, (int, float))
        and math.isfinite(temperature)
        and temperature > 0
    )
    if not valid:
        raise ValueError(
            "`temperature` must be a positive number (1.0 samples the model's "
            f"own distribution). Received: temperature={temperature!r}"
        )


def _is_text_batch(inputs):
    if isinstance(inputs, (str, bytes)):
        return True
    return isinstance(inputs, (list, tuple)) and all(
        isinstance(item, (str, bytes)) for item in inputs
    )


def _packed_prompt_lengths(inputs):
    missing = {"token_ids", "padding_mask"} - set(inputs)
    if missing:
        raise ValueError(
            "Packed prompts need `token_ids` and `padding_mask`. Missing: "
            f"{sorted(missing)}"
        )
    mask = np.asarray(keras.ops.convert_to_numpy(inputs["padding_mask"])).astype(bool)
    if mask.ndim != 2 or mask.shape[0] == 0:
        raise ValueError(
            "`padding_mask` must be [batch, length] with at least one row. "
            f"Received shape: {mask.shape}"
        )
    lengths = mask.sum(axis=-1)
    for number, length in enumerate(lengths):
        if length == 0:
            raise ValueError(
                f"Prompt {number} is empty (its `padding_mask` row has no "
                "True/1); every prompt needs at least one token."
            )
        if not mask[number, :length].all():
            raise ValueError(
                f"Prompt {number}'s `padding_mask` must be 1 on the prompt and "
                "0 after it (prompts are padded on the right)."
            )
    return [int(length) for length in lengths]


def _describe_backbone(backbone):
    if isinstance(backbone, AlbertBackbone):
        return "an AlbertBackbone with causal=False"
    return f"backbone of type {type(backbone).__name__}"
