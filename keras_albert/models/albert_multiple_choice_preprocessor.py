"""(context, [choices]) -> [batch, num_choices, sequence] ALBERT inputs."""

import keras
import numpy as np
from keras_hub.layers import MultiSegmentPacker
from keras_hub.models import Preprocessor
from keras_hub.src.utils.tensor_utils import convert_preprocessing_outputs_python
from keras_hub.src.utils.tensor_utils import preprocessing_function

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preprocessor_inputs import BackboneSequenceLengthMixin
from keras_albert.models.preprocessor_inputs import check_truncate
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.validation import check_sequence_length

# Without TensorFlow, `call` packs in Python (keras-hub's packer and the
# tokenizer's SentencePiece path): the same ids as the tf.strings path.
tf = optional_tensorflow()[0]


def _strings(value, name):
    tf = require_tensorflow("AlbertMultipleChoicePreprocessor (tf.strings preprocessing)", backend_too=False)
    tensor = tf.convert_to_tensor(value)
    if tensor.dtype != tf.string:
        raise ValueError(
            f"`x[{name!r}]` must hold strings. Received dtype {tensor.dtype.name}."
        )
    return tensor


def _python_strings(value, name, rank):
    """`value` as a NumPy array of str of the given rank (bytes decoded)."""
    array = np.asarray(value, dtype=object)
    if array.ndim != rank:
        layout = "[batch]" if rank == 1 else "[batch, num_choices]"
        raise ValueError(f"`x[{name!r}]` must be {layout} strings. Received shape {array.shape}.")
    for index, item in np.ndenumerate(array):
        if isinstance(item, bytes):
            array[index] = item.decode("utf-8")
        elif not isinstance(item, str):
            raise ValueError(f"`x[{name!r}]` must hold strings. Received {item!r:.80} at {list(index)}.")
    return array


def choice_second_segments(questions, choices):
    """Each choice's second segment: the question with the choice written
    into its first blank (`_`), or "question choice" (RACE's rule)."""
    return [
        question.replace("_", choice, 1) if "_" in question else f"{question} {choice}"
        for question, choice in zip(questions, choices)
    ]


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertMultipleChoicePreprocessor(
    PresetResolutionMixin, BackboneSequenceLengthMixin, Preprocessor
):
    """Packs each choice with its context, RACE style.

    `x` is a dict: `context` [batch] strings, `choices` [batch, num_choices]
    strings and an optional `question` [batch]. Choice `i` becomes
    `[CLS] context [SEP] question choice_i [SEP]`; a question with a blank
    (`_`) has the choice written into the blank instead, as Google's RACE
    code does. Any number of choices; the same number within one batch.

    Example:
    >>> pre = AlbertMultipleChoicePreprocessor.from_preset(
    ...     "albert_tiny_en", sequence_length=64)  # doctest: +SKIP
    >>> x = pre({"context": ["Anne stayed at home."],
    ...          "question": ["Where was Anne?"],
    ...          "choices": [["at home", "at sea"]]})  # doctest: +SKIP
    >>> x["token_ids"].shape  # doctest: +SKIP
    TensorShape([1, 2, 64])
    """

    # Not a subclass of the text-classifier preprocessor: keras-hub's
    # `TextClassifierPreprocessor.from_preset` must keep finding that one.
    backbone_cls = AlbertBackbone
    tokenizer_cls = AlbertTokenizer

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin", **kwargs):
        check_sequence_length(sequence_length)
        check_truncate(truncate)
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.truncate = truncate
        self.packer = None

    def build(self, input_shape):
        self.packer = MultiSegmentPacker(
            start_value=self.tokenizer.cls_token_id,
            end_value=self.tokenizer.sep_token_id,
            pad_value=self.tokenizer.pad_token_id,
            truncate=self.truncate,
            sequence_length=self.sequence_length,
        )
        self.built = True

    def get_config(self):
        config = super().get_config()
        config.update({"sequence_length": self.sequence_length, "truncate": self.truncate})
        return config

    @preprocessing_function
    def call(self, x, y=None, sample_weight=None):
        if not isinstance(x, dict) or "context" not in x or "choices" not in x:
            raise ValueError(
                "`x` must be a dict with 'context' [batch] and 'choices' "
                f"[batch, num_choices] strings (and optional 'question'). Received: {x!r}"
            )
        if tf is None:
            return self.call_in_python(x, y, sample_weight)
        require_tensorflow("AlbertMultipleChoicePreprocessor (tf.strings preprocessing)", backend_too=False)
        context = _strings(x["context"], "context")
        choices = _strings(x["choices"], "choices")
        if choices.shape.rank != 2:
            raise ValueError(
                "`x['choices']` must be [batch, num_choices]. Received shape "
                f"{choices.shape}."
            )
        num_choices = tf.shape(choices)[1]
        flat_choices = tf.reshape(choices, [-1])
        second = flat_choices
        if x.get("question") is not None:
            question = tf.repeat(_strings(x["question"], "question"), num_choices)
            # Text before and after the first blank ("" when there is none).
            halves = tf.strings.split(question, sep="_", maxsplit=1).to_tensor(
                default_value="", shape=[None, 2]
            )
            second = tf.where(
                tf.strings.regex_full_match(question, r"(?s).*_.*"),
                tf.strings.join([halves[:, 0], flat_choices, halves[:, 1]]),
                tf.strings.join([question, flat_choices], separator=" "),
            )
        first = self.tokenizer._tokenize_tf(tf.repeat(context, num_choices))
        token_ids, segment_ids = self.packer((first, self.tokenizer._tokenize_tf(second)))
        shape = [-1, num_choices, self.sequence_length]
        packed = {
            "token_ids": tf.reshape(token_ids, shape),
            "segment_ids": tf.reshape(segment_ids, shape),
            "padding_mask": tf.reshape(
                tf.cast(token_ids != self.tokenizer.pad_token_id, "int32"), shape
            ),
        }
        return keras.utils.pack_x_y_sample_weight(packed, y, sample_weight)

    def call_in_python(self, x, y=None, sample_weight=None):
        """`call` without TensorFlow: the same packed arrays (NumPy inside
        Grain, backend tensors otherwise), from Python lists or arrays."""
        context = _python_strings(x["context"], "context", 1)
        choices = _python_strings(x["choices"], "choices", 2)
        num_choices = choices.shape[1]
        second = choices.reshape(-1).tolist()
        if x.get("question") is not None:
            questions = np.repeat(_python_strings(x["question"], "question", 1), num_choices)
            second = choice_second_segments(questions.tolist(), second)
        first = self.tokenizer(np.repeat(context, num_choices).tolist())
        token_ids, segment_ids = self.packer((first, self.tokenizer(second)))
        token_ids = keras.ops.convert_to_numpy(token_ids).astype("int32")
        shape = [-1, num_choices, self.sequence_length]
        packed = {
            "token_ids": token_ids.reshape(shape),
            "segment_ids": keras.ops.convert_to_numpy(segment_ids).astype("int32").reshape(shape),
            "padding_mask": (token_ids != self.tokenizer.pad_token_id).astype("int32").reshape(shape),
        }
        return keras.utils.pack_x_y_sample_weight(
            convert_preprocessing_outputs_python(packed), y, sample_weight
        )
