"""Strings -> masked inputs, labels and weights for ALBERT's masked LM."""

import keras
from keras_hub.models import MaskedLMPreprocessor
from keras_hub.tokenizers import Tokenizer

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preprocessor_inputs import BackboneSequenceLengthMixin
from keras_albert.models.preprocessor_inputs import check_truncate
from keras_albert.models.preprocessor_inputs import int32_padding_mask
from keras_albert.models.preprocessor_inputs import text_pair_as_segments
from keras_albert.models.preprocessor_inputs import with_static_batch_size
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_sequence_length


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertMaskedLMPreprocessor(
    PresetResolutionMixin, BackboneSequenceLengthMixin, MaskedLMPreprocessor
):
    """Packs texts like `AlbertTextClassifierPreprocessor` and masks tokens.

    Selects `mask_selection_rate` of the tokens (at most
    `mask_selection_length`, Google's `max_predictions_per_seq`, default 20)
    and never `[CLS]`, `[SEP]` or padding; a selected token becomes `[MASK]`
    with probability `mask_token_rate`, a random token with
    `random_token_rate`, and stays as it is otherwise (80/10/10). Returns
    `(x, y, sample_weight)`: `x` with `mask_positions` and an int32
    `padding_mask`, `y` the original ids at those positions, and
    `sample_weight` 1 for real predictions and 0 for padding. New masks are
    drawn at every call, so each epoch sees different ones.

    For the original recipe's whole-word n-gram masking, see
    `keras_albert.data` (pretraining instances).

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> proto = train_sentencepiece(["the cat sat", "the dog ran"] * 50, 19)
    >>> pre = AlbertMaskedLMPreprocessor(
    ...     AlbertTokenizer(proto=proto), sequence_length=16,
    ...     mask_selection_length=4)
    >>> x, y, sample_weight = pre(["the cat sat", "the dog ran"])
    >>> x["mask_positions"].shape, y.shape, sample_weight.shape
    (TensorShape([2, 4]), TensorShape([2, 4]), TensorShape([2, 4]))
    """

    backbone_cls = AlbertBackbone
    tokenizer_cls = AlbertTokenizer

    def __init__(
        self,
        tokenizer,
        sequence_length=512,
        truncate="round_robin",
        mask_selection_rate=0.15,
        mask_selection_length=20,
        mask_token_rate=0.8,
        random_token_rate=0.1,
        **kwargs,
    ):
        if not isinstance(tokenizer, Tokenizer):
            raise ValueError(
                "`tokenizer` must be an `AlbertTokenizer`. Received: "
                f"tokenizer={tokenizer!r} of type {type(tokenizer).__name__}"
            )
        check_sequence_length(sequence_length)
        check_truncate(truncate)
        check_positive_int("mask_selection_length", mask_selection_length)
        for name, value in (
            ("mask_selection_rate", mask_selection_rate),
            ("mask_token_rate", mask_token_rate),
            ("random_token_rate", random_token_rate),
        ):
            # Probabilities, so 1.0 is valid (e.g. always use [MASK]).
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0.0 <= value <= 1.0
            ):
                raise ValueError(
                    f"`{name}` must be a float in [0, 1]. "
                    f"Received: {name}={value!r}"
                )
        if mask_token_rate + random_token_rate > 1:
            raise ValueError(
                "`mask_token_rate + random_token_rate` must be <= 1. Received: "
                f"mask_token_rate={mask_token_rate}, "
                f"random_token_rate={random_token_rate}"
            )
        super().__init__(
            tokenizer,
            sequence_length=sequence_length,
            truncate=truncate,
            mask_selection_rate=mask_selection_rate,
            mask_selection_length=mask_selection_length,
            mask_token_rate=mask_token_rate,
            random_token_rate=random_token_rate,
            **kwargs,
        )

    def call(self, x, y=None, sample_weight=None):
        x, y, sample_weight = text_pair_as_segments(x, y, sample_weight)
        outputs = super().call(x, y, sample_weight)
        masked, y, sample_weight = with_static_batch_size(outputs, x)
        return int32_padding_mask(masked), y, sample_weight
