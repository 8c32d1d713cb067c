"""(question, context) strings -> windowed span-QA inputs, and back to text."""

import keras
from keras_hub.models import Preprocessor

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preprocessor_inputs import BackboneSequenceLengthMixin
from keras_albert.models.question_answering_spans import build_windows
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.validation import check_sequence_length


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertQuestionAnswererPreprocessor(
    PresetResolutionMixin, BackboneSequenceLengthMixin, Preprocessor
):
    """Windows `[CLS] question [SEP] context-window [SEP]` with `doc_stride`.

    Windowing needs the original text to map answers back, so it runs in
    Python (`windows(...)`) rather than inside `fit`; the model then takes
    the windows' features, and `call` passes such features through.

    Args:
        tokenizer: an `AlbertTokenizer`.
        sequence_length: int, padded window length (384 in Google's SQuAD).
        doc_stride: int, pieces between the starts of consecutive windows.
        max_question_length: int, question pieces kept.
    """

    backbone_cls = AlbertBackbone
    tokenizer_cls = AlbertTokenizer

    def __init__(
        self, tokenizer, sequence_length=384, doc_stride=128, max_question_length=64, **kwargs
    ):
        check_sequence_length(sequence_length, minimum=4)
        for name, value in (("doc_stride", doc_stride), ("max_question_length", max_question_length)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{name}` must be a positive int. Received: {name}={value!r}")
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.doc_stride = doc_stride
        self.max_question_length = max_question_length

    def windows(self, questions, contexts, answers=None):
        """A `QuestionWindows` for the pairs (see `question_answering_spans`)."""
        return build_windows(
            self.tokenizer,
            list(questions),
            list(contexts),
            answers=answers,
            sequence_length=self.sequence_length,
            doc_stride=self.doc_stride,
            max_question_length=self.max_question_length,
        )

    def build(self, input_shape):
        # Nothing to build (windows are made in Python): without this Keras
        # warns, on every `fit` and `predict`, that the tokenizer is unbuilt.
        self.built = True

    def call(self, x, y=None, sample_weight=None):
        if not isinstance(x, dict) or "token_ids" not in x:
            raise ValueError(
                "`AlbertQuestionAnswerer` takes windowed features: call "
                "`preprocessor.windows(questions, contexts)` and pass "
                "`.features`, or use `model.answer(questions, contexts)`."
            )
        return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "doc_stride": self.doc_stride,
                "max_question_length": self.max_question_length,
            }
        )
        return config
