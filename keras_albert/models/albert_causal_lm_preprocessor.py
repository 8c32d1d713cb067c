"""Strings -> next-token inputs, labels and weights for AlbertCausalLM."""

import keras
from keras_hub.models import CausalLMPreprocessor
from keras_hub.tokenizers import Tokenizer

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preprocessor_inputs import BackboneSequenceLengthMixin
from keras_albert.models.preprocessor_inputs import int32_padding_mask
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.validation import check_sequence_length


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertCausalLMPreprocessor(
    PresetResolutionMixin, BackboneSequenceLengthMixin, CausalLMPreprocessor
):
    """keras-hub's `CausalLMPreprocessor` with ALBERT's tokenizer.

    A text becomes `[CLS] tokens [SEP]` (ALBERT's start and end tokens
    stand for GPT-2's `<|endoftext|>`), padded to `sequence_length`; `x` is
    every token but the last, `y` every token but the first and
    `sample_weight` 1 on real targets. `generate_preprocess` packs prompts
    without `[SEP]` and `generate_postprocess` strips special tokens and
    detokenizes. `padding_mask` is int32, as the backbone takes it.

    Args:
        tokenizer: an `AlbertTokenizer`.
        sequence_length: int, the packed length (the generation window
            unless `generate(max_length=...)` says otherwise).
        add_start_token: bool, put `[CLS]` first.
        add_end_token: bool, put `[SEP]` last when training.

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> proto = train_sentencepiece(["the cat sat", "the dog ran"] * 50, 19)
    >>> pre = AlbertCausalLMPreprocessor(AlbertTokenizer(proto=proto),
    ...                                  sequence_length=8)
    >>> x, y, sample_weight = pre(["the cat sat"])
    >>> bool((x["token_ids"][:, 1:] == y[:, :-1]).numpy().all())
    True
    """

    backbone_cls = AlbertBackbone
    tokenizer_cls = AlbertTokenizer

    def __init__(
        self,
        tokenizer,
        sequence_length=512,
        add_start_token=True,
        add_end_token=True,
        **kwargs,
    ):
        if not isinstance(tokenizer, Tokenizer):
            raise ValueError(
                "`tokenizer` must be an `AlbertTokenizer`. Received: "
                f"tokenizer={tokenizer!r} of type {type(tokenizer).__name__}"
            )
        check_sequence_length(sequence_length)
        for name, value in (
            ("add_start_token", add_start_token),
            ("add_end_token", add_end_token),
        ):
            if not isinstance(value, bool):
                raise ValueError(
                    f"`{name}` must be True or False. Received: {name}={value!r}"
                )
        super().__init__(
            tokenizer,
            sequence_length=sequence_length,
            add_start_token=add_start_token,
            add_end_token=add_end_token,
            **kwargs,
        )

    def call(self, x, y=None, sample_weight=None, sequence_length=None):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(
            super().call(x, y, sample_weight, sequence_length=sequence_length)
        )
        return int32_padding_mask(x), y, sample_weight

    def prompt_lengths(self, prompts):
        """Number of tokens each prompt string takes, `[CLS]` included."""
        token_ids = self.tokenizer(prompts)
        if hasattr(token_ids, "to_list"):
            token_ids = token_ids.to_list()
        lengths = [len(ids) for ids in token_ids]
        return [length + int(self.add_start_token) for length in lengths]
