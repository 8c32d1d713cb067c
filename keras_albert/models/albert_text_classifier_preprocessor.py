"""Strings (or string pairs) -> ALBERT classifier inputs."""

import keras
from keras_hub.models import TextClassifierPreprocessor
from keras_hub.tokenizers import Tokenizer

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preprocessor_inputs import BackboneSequenceLengthMixin
from keras_albert.models.preprocessor_inputs import check_text_segments
from keras_albert.models.preprocessor_inputs import check_truncate
from keras_albert.models.preprocessor_inputs import empty_packed_batch
from keras_albert.models.preprocessor_inputs import int32_padding_mask
from keras_albert.models.preprocessor_inputs import is_empty_list_batch
from keras_albert.models.preprocessor_inputs import text_pair_as_segments
from keras_albert.models.preprocessor_inputs import with_static_batch_size
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.validation import check_sequence_length


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertTextClassifierPreprocessor(
    PresetResolutionMixin, BackboneSequenceLengthMixin, TextClassifierPreprocessor
):
    """Tokenizes and packs texts as `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`.

    Segment ids are 0 for `[CLS] a [SEP]` and 1 for `b [SEP]`; pairs are
    truncated to `sequence_length` by `truncate` ("round_robin" trims the
    longer segment one token at a time, "waterfall" trims the last segment
    first). Outputs `token_ids`, `segment_ids` and an int32 `padding_mask`.

    Pairs may be passed as `pre(x=(a, b))`, `pre((a, b))` or `pre(a, b)`:
    a string in the label position is read as the second segment (labels are
    never strings here), which also makes `classifier.predict((a, b))` work.

    Args:
        tokenizer: an `AlbertTokenizer`.
        sequence_length: int, padded length.
        truncate: "round_robin" or "waterfall".

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> proto = train_sentencepiece(["the cat sat", "the dog ran"] * 50, 19)
    >>> pre = AlbertTextClassifierPreprocessor(
    ...     AlbertTokenizer(proto=proto), sequence_length=8)
    >>> x = pre(x=(["the cat"], ["a dog"]))
    >>> x["token_ids"].numpy().tolist()  # [CLS]=2 ... [SEP]=3 ... [SEP]=3
    [[2, 5, 6, 8, 3, 5, 17, 3]]
    >>> x["segment_ids"].numpy().tolist()
    [[0, 0, 0, 0, 0, 1, 1, 1]]
    """

    backbone_cls = AlbertBackbone
    tokenizer_cls = AlbertTokenizer

    def __init__(
        self, tokenizer, sequence_length=512, truncate="round_robin", **kwargs
    ):
        if not isinstance(tokenizer, Tokenizer):
            raise ValueError(
                "`tokenizer` must be an `AlbertTokenizer`. Received: "
                f"tokenizer={tokenizer!r} of type {type(tokenizer).__name__}"
            )
        check_sequence_length(sequence_length)
        check_truncate(truncate)
        super().__init__(
            tokenizer,
            sequence_length=sequence_length,
            truncate=truncate,
            **kwargs,
        )

    def call(self, x, y=None, sample_weight=None):
        x, y, sample_weight = text_pair_as_segments(x, y, sample_weight)
        if is_empty_list_batch(x):
            packed = empty_packed_batch(self.sequence_length)
            return keras.utils.pack_x_y_sample_weight(packed, y, sample_weight)
        check_text_segments(x, type(self).__name__)
        outputs = super().call(x, y, sample_weight)
        packed, y, sample_weight = keras.utils.unpack_x_y_sample_weight(outputs)
        packed = with_static_batch_size(int32_padding_mask(packed), x)
        return keras.utils.pack_x_y_sample_weight(packed, y, sample_weight)
