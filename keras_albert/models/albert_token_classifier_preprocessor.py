"""Words (and per-word labels) -> ALBERT inputs with sub-word aligned labels."""

import importlib
import re

import keras
import numpy as np
from keras_hub.layers import StartEndPacker
from keras_hub.models import Preprocessor
from keras_hub.src.utils.tensor_utils import convert_preprocessing_outputs_python
from keras_hub.src.utils.tensor_utils import preprocessing_function

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preprocessor_inputs import BackboneSequenceLengthMixin
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.validation import check_sequence_length

# Without TensorFlow, `call` and `word_ids` pack in Python (the tokenizer's
# SentencePiece path, keras-hub's packers): the same arrays as tf.ragged.
tf = optional_tensorflow()[0]

# Packed positions that belong to no word ([CLS], [SEP], padding).
NO_WORD = -1
# `tf.strings.split` splits texts on ASCII whitespace only (not U+00A0).
_ASCII_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")


def _as_words(x):
    """A ragged [batch, (words)] string tensor from words or whole texts."""
    tf = require_tensorflow("AlbertTokenClassifierPreprocessor (tf.ragged preprocessing)", backend_too=False)
    if isinstance(x, tf.RaggedTensor):
        return x
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], (list, tuple)):
        return tf.ragged.constant([list(words) for words in x], dtype=tf.string)
    texts = tf.convert_to_tensor(x)
    if texts.dtype == tf.string and texts.shape.rank == 2:
        # Word lists of equal length arrive as a dense matrix.
        return tf.RaggedTensor.from_tensor(texts)
    if texts.dtype != tf.string or texts.shape.rank != 1:
        raise ValueError(
            "`x` must be a batch of word lists (list of lists of str, or a "
            "ragged string tensor) or a batch of texts split on whitespace. "
            f"Received: {x!r}"
        )
    return tf.strings.split(texts)


def _python_words(x):
    """Word lists (str) from word lists or whole texts, as `_as_words` reads them."""
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if not isinstance(x, (list, tuple)):
        raise ValueError(
            "`x` must be a batch of word lists (list of lists of str) or a batch of "
            f"texts split on whitespace. Received: {x!r:.200}"
        )

    def text(item):
        if isinstance(item, bytes):
            return item.decode("utf-8")
        if not isinstance(item, str):
            raise ValueError(f"`x` must hold strings (words or texts). Received {item!r:.80}.")
        return item

    rows = []
    for item in x:
        if isinstance(item, (list, tuple, np.ndarray)):
            rows.append([text(word) for word in list(item)])
        else:
            rows.append([word for word in _ASCII_WHITESPACE.split(text(item)) if word])
    return rows


def _python_word_labels(y, words):
    labels = [np.asarray(row).reshape(-1).astype("int32").tolist() for row in y]
    if len(labels) != len(words) or any(len(a) != len(b) for a, b in zip(labels, words)):
        raise ValueError("`y` must hold exactly one label per word.")
    return labels


def _as_word_labels(y, words):
    tf = require_tensorflow("AlbertTokenClassifierPreprocessor (tf.ragged preprocessing)", backend_too=False)
    if isinstance(y, tf.RaggedTensor):
        labels = y
    elif isinstance(y, tf.Tensor) and y.shape.rank == 2:
        labels = tf.RaggedTensor.from_tensor(y)
    else:
        labels = tf.ragged.constant([list(row) for row in y], dtype=tf.int32)
    labels = tf.cast(labels, "int32")
    tf.debugging.assert_equal(
        labels.row_lengths(), words.row_lengths(),
        message="`y` must hold exactly one label per word",
    )
    return labels


def word_label_dataset(words, labels=None, batch_size=32):
    """A batched `tf.data.Dataset` of ragged word lists (and word labels).

    Python lists of word lists of different lengths cannot become a dense
    array, so `fit`/`predict` are fed through this. Without TensorFlow, a
    grain dataset of the same batches as Python lists, which the
    preprocessor's Python path packs (keras-hub's tasks take grain there).
    """
    if tf is None:
        return _grain_word_batches(words, labels, batch_size)
    features = tf.data.Dataset.from_tensor_slices(
        tf.ragged.constant([list(words_) for words_ in words], dtype=tf.string)
    )
    if labels is not None:
        targets = tf.data.Dataset.from_tensor_slices(
            tf.ragged.constant([list(row) for row in labels], dtype=tf.int32)
        )
        features = tf.data.Dataset.zip((features, targets))
    return features.ragged_batch(batch_size)


def _grain_word_batches(words, labels, batch_size):
    try:
        grain = importlib.import_module("grain")
    except ImportError as error:
        raise ImportError(
            "`word_label_dataset` without TensorFlow needs grain: pip install grain "
            "(or tensorflow tensorflow-text)."
        ) from error
    words = [list(row) for row in words]
    labels = None if labels is None else [list(row) for row in labels]
    if labels is not None and len(labels) != len(words):
        raise ValueError(
            f"`labels` holds {len(labels)} rows for {len(words)} word lists; one row of labels per word list."
        )
    batches = []
    for start in range(0, len(words), batch_size):
        # A 1-tuple: keras-hub unpacks a bare list as (x, y, sample_weight).
        batch = (words[start:start + batch_size],)
        if labels is not None:
            batch += (labels[start:start + batch_size],)
        batches.append(batch)
    return grain.MapDataset.source(batches)


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertTokenClassifierPreprocessor(
    PresetResolutionMixin, BackboneSequenceLengthMixin, Preprocessor
):
    """Tokenizes word by word; the first piece of each word carries its label.

    `x` is a batch of word lists (CoNLL style) or of texts split on
    whitespace. `y`, if given, has one int label per word. Outputs the
    backbone inputs, `y` as [batch, sequence] labels at each word's first
    piece, and `sample_weight` 1 there and 0 on later pieces, [CLS], [SEP]
    and padding, so the loss and metrics count each word once. Words past
    `sequence_length - 2` pieces are truncated. `word_ids(x)` gives, for
    every packed position, the index of the word it starts (-1 elsewhere).

    Example:
    >>> pre = AlbertTokenClassifierPreprocessor.from_preset(
    ...     "albert_tiny_en", sequence_length=32)  # doctest: +SKIP
    >>> x, y, w = pre([["Anne", "Elliot", "walked"]], [[1, 2, 0]])  # doctest: +SKIP
    """

    backbone_cls = AlbertBackbone
    tokenizer_cls = AlbertTokenizer

    def __init__(self, tokenizer, sequence_length=512, **kwargs):
        check_sequence_length(sequence_length)
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.packer = None

    def build(self, input_shape):
        tokenizer = self.tokenizer
        self.packer = StartEndPacker(
            start_value=tokenizer.cls_token_id,
            end_value=tokenizer.sep_token_id,
            pad_value=tokenizer.pad_token_id,
            sequence_length=self.sequence_length,
            return_padding_mask=True,
        )
        # Labels, weights and word ids ride along with the same truncation.
        self.side_packer = StartEndPacker(
            start_value=0, end_value=0, pad_value=0, sequence_length=self.sequence_length
        )
        self.built = True

    def _pieces(self, x):
        tf = require_tensorflow("AlbertTokenClassifierPreprocessor (tf.ragged preprocessing)", backend_too=False)
        words = _as_words(x)
        # The TF path in eager mode too: ragged tensors, not Python lists.
        pieces = self.tokenizer._tokenize_tf(words.flat_values)  # [words, (pieces)]
        lengths = pieces.row_lengths()
        first = tf.ragged.range(lengths).flat_values == 0
        per_example = tf.RaggedTensor.from_row_splits(
            pieces.flat_values,
            tf.gather(tf.concat([[0], tf.cumsum(lengths)], 0), words.row_splits),
        )
        return words, lengths, first, per_example

    def _side(self, flat_values, like):
        tf = require_tensorflow("AlbertTokenClassifierPreprocessor (tf.ragged preprocessing)", backend_too=False)
        return self.side_packer(tf.RaggedTensor.from_row_splits(flat_values, like.row_splits))

    @preprocessing_function
    def word_ids(self, x):
        """[batch, sequence] index of the word starting at each position, or -1."""
        if tf is None:
            return self.word_ids_in_python(x)
        require_tensorflow("AlbertTokenClassifierPreprocessor (tf.ragged preprocessing)", backend_too=False)
        words, lengths, first, token_ids = self._pieces(x)
        position_in_example = tf.range(tf.size(lengths), dtype=tf.int64) - tf.repeat(
            words.row_starts(), words.row_lengths()
        )
        word_of_piece = tf.repeat(position_in_example, lengths)
        # Shift by one so that padding (0) becomes -1.
        marked = tf.where(first, word_of_piece + 1, 0)
        return tf.cast(self._side(marked, token_ids), "int32") - 1

    @preprocessing_function
    def call(self, x, y=None, sample_weight=None):
        if tf is None:
            return self.call_in_python(x, y, sample_weight)
        require_tensorflow("AlbertTokenClassifierPreprocessor (tf.ragged preprocessing)", backend_too=False)
        words, lengths, first, ragged_ids = self._pieces(x)
        token_ids, padding_mask = self.packer(ragged_ids)
        features = {
            "token_ids": token_ids,
            "segment_ids": tf.zeros_like(token_ids),
            "padding_mask": tf.cast(padding_mask, "int32"),
        }
        if y is None:
            return keras.utils.pack_x_y_sample_weight(features, None, sample_weight)
        labels = _as_word_labels(y, words)
        piece_labels = self._side(tf.repeat(labels.flat_values, lengths), ragged_ids)
        weights = tf.cast(self._side(tf.cast(first, "int32"), ragged_ids), "float32")
        return features, piece_labels, weights

    # === The Python path (no TensorFlow): lists in, the same arrays out ===

    def _python_pieces(self, x):
        """(words, pieces of each word per example): lists of lists."""
        words = _python_words(x)
        flat = [word for row in words for word in row]
        pieces = [list(map(int, ids)) for ids in self.tokenizer(flat)] if flat else []
        per_example, start = [], 0
        for row in words:
            per_example.append(pieces[start:start + len(row)])
            start += len(row)
        return words, per_example

    def _side_in_python(self, rows):
        """Per-piece values packed like the ids (0 at [CLS], [SEP], padding)."""
        return keras.ops.convert_to_numpy(self.side_packer(rows)).astype("int32")

    def word_ids_in_python(self, x):
        """`word_ids` without TensorFlow."""
        _, pieces = self._python_pieces(x)
        # Shifted by one so that padding (0) becomes -1.
        marked = [[word + 1 if i == 0 else 0 for word, ids in enumerate(row) for i in range(len(ids))]
                  for row in pieces]
        return convert_preprocessing_outputs_python(self._side_in_python(marked) - 1)

    def call_in_python(self, x, y=None, sample_weight=None):
        """`call` without TensorFlow: the same packed arrays (NumPy inside
        Grain, backend tensors otherwise), from lists of words or texts."""
        words, pieces = self._python_pieces(x)
        ids = [[piece for word in row for piece in word] for row in pieces]
        token_ids, padding_mask = self.packer(ids)
        token_ids = keras.ops.convert_to_numpy(token_ids).astype("int32")
        features = {
            "token_ids": token_ids,
            "segment_ids": np.zeros_like(token_ids),
            "padding_mask": keras.ops.convert_to_numpy(padding_mask).astype("int32"),
        }
        if y is None:
            return keras.utils.pack_x_y_sample_weight(
                convert_preprocessing_outputs_python(features), None, sample_weight
            )
        labels = _python_word_labels(y, words)
        piece_labels = [[label for label, word in zip(row_labels, row) for _ in word]
                        for row_labels, row in zip(labels, pieces)]
        first = [[int(i == 0) for word in row for i in range(len(word))] for row in pieces]
        return convert_preprocessing_outputs_python(
            (features, self._side_in_python(piece_labels), self._side_in_python(first).astype("float32"))
        )

    def get_config(self):
        config = super().get_config()
        config.update({"sequence_length": self.sequence_length})
        return config
