"""AlbertTokenizer: ALBERT's text normalisation + in-graph SentencePiece."""

import functools
import os
import sys
import unicodedata

import keras
import numpy as np
from keras_hub.src.utils.tensor_utils import preprocessing_function
from keras_hub.tokenizers import SentencePieceTokenizer

from keras_albert.input_checks.tokenizer_text import check_tokenizer_text
from keras_albert.input_checks.tokenizer_text import not_text_error
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.native_notices import SENTENCEPIECE_NOTICES
from keras_albert.utils.native_notices import SENTENCEPIECE_RESOURCE_NOTICES
from keras_albert.utils.native_notices import notices_held_back
from keras_albert.utils.text_normalization import normalize_text

# The TensorFlow path (tf.data maps, serving graphs) where TensorFlow is
# installed; without it the tokenizer runs on Python's SentencePiece.
tf, tf_text = optional_tensorflow()

# ALBERT's fixed ids: the packers, the MLM masking and every released
# checkpoint rely on them.
ALBERT_SPECIAL_TOKENS = (
    ("<pad>", 0),
    ("<unk>", 1),
    ("[CLS]", 2),
    ("[SEP]", 3),
    ("[MASK]", 4),
)


def _as_regex_class(code_points):
    """`[...]` RE2 class for sorted code points, merged into ranges."""
    ranges = []
    for point in code_points:
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1][1] = point
        else:
            ranges.append([point, point])
    parts = (
        f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}"
        for lo, hi in ranges
    )
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def _unicode_patterns():
    """Regexes for Python's `\\s` and `unicodedata.combining`.

    RE2's `\\s` is ASCII-only and `\\p{Mn}` differs from `combining() != 0`
    on ~1000 code points, so both classes are built from Python's own tables:
    the graph then agrees exactly with Google's `preprocess_text` and with
    `keras_albert.utils.text_normalization.normalize_text`.
    """
    spaces, marks = [], []
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        if char.isspace():
            spaces.append(point)
        elif unicodedata.combining(char):
            marks.append(point)
    return _as_regex_class(spaces) + "+", _as_regex_class(marks)


def _lowercase(text):
    # `tf.strings.lower` stops at the first NUL byte and drops the rest of
    # the string, so lowercase the NUL-free pieces and join them back. The
    # NUL goes in as tensor data: string attrs (`separator=`) lose it too.
    flat = tf.reshape(text, [-1])
    nul = tf.constant("\x00")
    pieces = tf.strings.split(flat, sep="\x00")
    pieces = tf.ragged.map_flat_values(
        lambda piece: tf.strings.join(
            [tf.strings.lower(piece, encoding="utf-8"), nul]
        ),
        pieces,
    )
    joined = tf.strings.reduce_join(pieces, axis=-1)
    # Every string has at least one piece, so at least one trailing NUL.
    length = tf.strings.length(joined)
    lowered = tf.strings.substr(joined, tf.zeros_like(length), length - 1)
    return tf.ensure_shape(tf.reshape(lowered, tf.shape(text)), text.shape)


def albert_normalize_text(text, lowercase=True):
    """ALBERT's text preprocessing as TensorFlow string ops.

    Drops byte order marks (U+FEFF) wherever they are, collapses whitespace
    runs to one space and strips the ends, turns
    LaTeX-style quotes (two backticks or two apostrophes) into `"`; if
    `lowercase`, also applies NFKD, removes combining marks (accents) and
    lowercases, exactly as `keras_albert.utils.text_normalization` (up to
    characters newer than Unicode 14). Works eagerly, in `tf.function` and
    in `tf.data` maps, on string tensors of any rank (and ragged ones).

    Args:
        text: string tensor (or anything `tf.convert_to_tensor` accepts).
        lowercase: bool, apply the uncased steps.

    Returns:
        A string tensor of the same shape.

    Example:
    >>> albert_normalize_text(["  Héllo\\tWORLD "]).numpy()
    array([b'hello world'], dtype=object)
    """
    require_tensorflow("In-graph text normalisation", backend_too=False)
    if tf_text is None:
        require_tensorflow("In-graph text normalisation (tensorflow-text)", backend_too=False)
    if isinstance(text, tf.RaggedTensor):
        return tf.ragged.map_flat_values(
            albert_normalize_text, text, lowercase=lowercase
        )
    text = tf.convert_to_tensor(text)
    if text.dtype != tf.string:
        raise ValueError(
            "`text` must be a string tensor. "
            f"Received: text with dtype={text.dtype.name}"
        )
    whitespace, combining_mark = _unicode_patterns()
    # A byte order mark is the file's, not the text's: it would otherwise
    # add tokens and change the prediction. Dropped anywhere, as the
    # raw-string TFLite tokenizer's character map must (text_normalization).
    text = tf.strings.regex_replace(text, "\\x{feff}", "")
    text = tf.strings.regex_replace(text, whitespace, " ")
    text = tf.strings.regex_replace(text, "^ | $", "")
    # Google's `preprocess_text` also turns LaTeX-style quotes into `"`.
    text = tf.strings.regex_replace(text, "``", '"')
    text = tf.strings.regex_replace(text, "''", '"')
    if lowercase:
        text = tf_text.normalize_utf8(text, "NFKD")
        text = tf.strings.regex_replace(text, combining_mark, "")
        text = _lowercase(text)
    return text


def _flatten(items):
    for item in items:
        if isinstance(item, (list, tuple, np.ndarray)):
            yield from _flatten(item)
        else:
            yield item


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertTokenizer(PresetResolutionMixin, SentencePieceTokenizer):
    """ALBERT's SentencePiece tokenizer, with ALBERT's text normalisation.

    Before SentencePiece, text is normalised as Google's ALBERT does for its
    uncased models: whitespace collapsed, LaTeX quotes made `"` and, with
    `lowercase=True`, NFKD, accents (combining marks) removed and
    lowercased. This runs inside the TensorFlow graph (tensorflow-text), so
    the tokenizer works in `tf.data` maps and exported SavedModels; eager
    calls give the same ids.

    The vocabulary must hold ALBERT's special tokens at ALBERT's ids:
    `<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4
    (`keras_albert.data.sentencepiece_training.train_sentencepiece` makes
    such vocabularies).

    A scalar string gives a dense int tensor; a batch gives a ragged batch
    (or a dense one if `sequence_length` is set).

    Args:
        proto: SentencePiece model, as serialized `bytes` or a file path.
            None leaves the vocabulary to be set later (`load_assets`,
            `from_preset`).
        lowercase: bool, apply the uncased normalisation (True, like the
            official ALBERT v2 models). False keeps case and accents.
        **kwargs: passed to `keras_hub.tokenizers.SentencePieceTokenizer`
            (e.g. `sequence_length`, `dtype`).

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> proto = train_sentencepiece(["the cat sat", "the dog ran"] * 50, 19)
    >>> tokenizer = AlbertTokenizer(proto=proto)
    >>> bool((tokenizer("The  Cât") == tokenizer("the cat")).all())
    True
    >>> tokenizer.detokenize(tokenizer(["The Dog", "ran"]))
    ['the dog', 'ran']
    """

    backbone_cls = AlbertBackbone

    def __init__(self, proto=None, lowercase=True, **kwargs):
        if not isinstance(lowercase, bool):
            raise ValueError(
                "`lowercase` must be True or False. "
                f"Received: lowercase={lowercase!r}"
            )
        self._add_special_token("[CLS]", "cls_token")
        self._add_special_token("[SEP]", "sep_token")
        self._add_special_token("<pad>", "pad_token")
        self._add_special_token("[MASK]", "mask_token")
        # keras-hub's packers look for start/end tokens.
        self._add_special_token("[CLS]", "start_token")
        self._add_special_token("[SEP]", "end_token")
        self.lowercase = lowercase
        super().__init__(proto=proto, **kwargs)

    @property
    def unk_token(self):
        return "<unk>"

    @property
    def unk_token_id(self):
        # Not a registered special token: Google's masking may pick `<unk>`.
        return getattr(self, "_unk_token_id", None)

    def set_proto(self, proto):
        if isinstance(proto, os.PathLike):
            proto = os.fspath(proto)
        if proto is not None and not isinstance(proto, (str, bytes)):
            raise ValueError(
                "`proto` must be serialized SentencePiece `bytes`, a file "
                "path, or None. "
                f"Received: proto of type {type(proto).__name__}"
            )
        try:
            with notices_held_back(SENTENCEPIECE_NOTICES):
                super().set_proto(proto)
        except (*_tensorflow_errors(), RuntimeError) as error:
            shown = proto if isinstance(proto, str) else f"<{len(proto)} bytes>"
            raise ValueError(
                "`proto` is not a valid SentencePiece model. "
                f"Received: proto={shown!r:.200}. SentencePiece said: {error}"
            ) from error

    def _update_special_token_ids(self):
        # Runs in `set_proto` once the vocabulary is known.
        self._check_albert_special_tokens()
        super()._update_special_token_ids()

    def _check_albert_special_tokens(self):
        token_to_id = self._token_to_id_map
        problems = []
        for token, expected_id in ALBERT_SPECIAL_TOKENS:
            if token not in token_to_id:
                problems.append(f"{token!r} is missing")
            elif token_to_id[token] != expected_id:
                problems.append(
                    f"{token!r} is at id {token_to_id[token]}, not {expected_id}"
                )
        if not problems:
            return
        expected = ", ".join(f"{t}={i}" for t, i in ALBERT_SPECIAL_TOKENS)
        found = ", ".join(
            f"{self._vocabulary[i]}={i}"
            for i in range(
                min(len(ALBERT_SPECIAL_TOKENS), self._vocabulary_size)
            )
        )
        raise ValueError(
            "`proto` is not an ALBERT SentencePiece vocabulary: "
            f"{'; '.join(problems)}. ALBERT expects {expected}; this "
            f"vocabulary has {found}. Train one with "
            "`keras_albert.data.sentencepiece_training.train_sentencepiece`, "
            "or pass SentencePiece's trainer pad_id=0, unk_id=1, bos_id=2, "
            "eos_id=3, pad_piece='<pad>', unk_piece='<unk>', "
            "bos_piece='[CLS]', eos_piece='[SEP]', "
            "user_defined_symbols='[MASK]'."
        )

    def tokenize(self, inputs):
        if isinstance(inputs, (list, tuple)) and not len(inputs):
            # `[]` would become a float tensor; an empty batch has no ids.
            inputs = np.array([], object) if tf is None else tf.constant([], tf.string)
        return super().tokenize(inputs)

    def detokenize(self, inputs):
        self._check_ids(inputs)
        return super().detokenize(inputs)

    def _check_ids(self, inputs):
        """Eager ids must be integers in [0, vocabulary_size)."""
        if tf is not None and isinstance(inputs, tf.RaggedTensor):
            inputs = inputs.flat_values
        values = inputs
        if tf is not None and isinstance(values, tf.Tensor):
            if not hasattr(values, "numpy"):
                return  # symbolic: checked by SentencePiece at run time
            values = values.numpy()
        if isinstance(values, (list, tuple)):
            values = list(_flatten(values))
        values = np.asarray(values).ravel()
        if values.size and values.dtype.kind not in "iu":
            raise ValueError(
                "`detokenize` takes integer token ids; received values of dtype "
                f"{values.dtype} such as {values[0]!r}."
            )
        size = self.vocabulary_size()
        bad = values[(values < 0) | (values >= size)]
        if bad.size:
            raise ValueError(
                f"`detokenize` received token ids outside [0, {size}) (the "
                f"vocabulary size): {sorted(set(bad.tolist()))[:5]}."
            )

    def normalize(self, inputs):
        """Applies ALBERT's text normalisation (see `albert_normalize_text`):
        a string tensor where TensorFlow is installed; without it, the same
        text as Python strings (a `str`, or nested lists of them)."""
        if tf is None:
            return self._normalize_in_python(inputs)
        return albert_normalize_text(inputs, lowercase=self.lowercase)

    def _ensure_sentencepiece_resource(self):
        # tensorflow-text's SentencePiece model lives in a resource owned by
        # an eager kernel: `keras.utils.set_random_seed`, `tf.random.set_seed`
        # and `clear_session` empty the kernel cache and delete it
        # (tensorflow/text#570), and every later tf.data map or tf.function
        # fails with "SentencepieceResource does not exist". Check it (one
        # tiny eager op) and re-create it before a graph captures the handle.
        # The failed lookup logs two warnings of its own; held back (only
        # those: every other line shows).
        self._maybe_initialized_tf()
        with tf.init_scope():
            missing = False
            with notices_held_back(SENTENCEPIECE_RESOURCE_NOTICES):
                try:
                    self._sentence_piece.vocab_size()
                except tf.errors.NotFoundError:
                    missing = True
            if missing:
                with notices_held_back(SENTENCEPIECE_NOTICES):
                    self._set_proto_tf(self.proto)

    @preprocessing_function
    def _tokenize_tf(self, inputs):
        self._ensure_sentencepiece_resource()
        return super()._tokenize_tf(self.normalize(inputs))

    @preprocessing_function
    def _detokenize_tf(self, inputs):
        self._ensure_sentencepiece_resource()
        return super()._detokenize_tf(inputs)

    def _tokenize_spm(self, inputs):
        if tf is None:
            check_tokenizer_text(inputs)
            normalized = self._normalize_in_python(inputs)
            if not isinstance(normalized, str):
                # An array, as the TF path hands keras-hub: its rank check
                # then names the shape of a nested batch on both paths.
                normalized = np.asarray(normalized, dtype=object)
            return super()._tokenize_spm(normalized)
        # One implementation of the normalisation for both paths, so eager
        # and graph calls give identical ids: run the TF ops eagerly.
        try:
            inputs = tf.convert_to_tensor(inputs)
        except (TypeError, ValueError) as error:
            raise ValueError(
                "The tokenizer takes a string or a list/array/tensor of "
                f"strings. Received: {inputs!r:.200}"
            ) from error
        return super()._tokenize_spm(self.normalize(inputs).numpy())

    def _normalize_in_python(self, inputs):
        """Without TensorFlow: the same normalisation in Python (equal to
        the graph's, see `albert_normalize_text`), on a string or a nested
        list/array of strings."""
        if isinstance(inputs, (str, bytes)):
            text = inputs.decode("utf-8", errors="replace") if isinstance(inputs, bytes) else inputs
            return normalize_text(text, lowercase=self.lowercase)
        if isinstance(inputs, np.ndarray) and inputs.ndim == 0:
            return self._normalize_in_python(inputs.item())
        if isinstance(inputs, (list, tuple, np.ndarray)):
            return [self._normalize_in_python(item) for item in inputs]
        raise not_text_error(inputs)

    def get_config(self):
        config = super().get_config()
        config.update({"lowercase": self.lowercase})
        return config


def _tensorflow_errors():
    return (tf.errors.OpError,) if tf is not None else ()
