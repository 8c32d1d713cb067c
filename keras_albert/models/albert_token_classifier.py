"""AlbertTokenClassifier: a label for every word (NER, POS, chunking)."""

import keras
import numpy as np
from keras_hub.models import Task

from keras_albert.input_checks.task_inputs import TokenFeatureChecksMixin
from keras_albert.input_checks.task_inputs import check_word_labels
from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_token_classifier_preprocessor import (
    AlbertTokenClassifierPreprocessor,
)
from keras_albert.models.albert_token_classifier_preprocessor import word_label_dataset
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.models.jit_default import default_jit_compile
from keras_albert.models.label_names import LabelNamesMixin
from keras_albert.models.label_names import check_label_names
from keras_albert.models.length_buckets import DEFAULT_BUCKETS
from keras_albert.models.length_buckets import PackedInputsMixin
from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import predict_packed
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate

# Word lists go to the preprocessor as a ragged tensor where TensorFlow is
# installed, as Python lists (its Python path) where it is not.
tf = optional_tensorflow()[0]


def is_ragged_word_lists(x):
    """A Python list of word lists, not all of one length."""
    if not isinstance(x, (list, tuple)) or not all(isinstance(row, (list, tuple)) for row in x):
        return False
    return len({len(row) for row in x}) > 1


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertTokenClassifier(
    CompileConfigMixin, LabelNamesMixin, TokenFeatureChecksMixin, PackedInputsMixin, PresetResolutionMixin, Task
):
    """Per-piece logits [batch, sequence, num_classes] on the sequence output.

    Trained on the first piece of each word (the preprocessor's
    `sample_weight`); `predict_word_labels` maps predictions back to words.
    `label_names` (None or `num_classes` distinct strings, the name of each
    class id) is saved in the config and served as `labels`.

    Example:
    >>> tagger = keras_albert.AlbertTokenClassifier.from_preset(
    ...     "albert_tiny_en", num_classes=9)  # doctest: +SKIP
    >>> tagger.fit(word_label_dataset([["Anne", "walked"]], [[1, 0]]))  # doctest: +SKIP
    >>> tagger.predict_word_labels([["Emma", "smiled"]])  # doctest: +SKIP
    [[1, 0]]
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertTokenClassifierPreprocessor
    # Inputs are checked before tracing (see `TokenFeatureChecksMixin`).
    raw_input_kind = "word_lists"
    # `predict_word_labels` pads each batch to the smallest of these that
    # holds it (only real positions are read, so labels are unchanged).
    length_buckets = DEFAULT_BUCKETS

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=0.1, label_names=None, **kwargs):
        check_positive_int("num_classes", num_classes)
        check_rate("dropout", dropout)
        label_names = check_label_names(label_names, num_classes)
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.output_dense = keras.layers.Dense(
            num_classes,
            kernel_initializer=albert_kernel_initializer(backbone.initializer_range),
            dtype=backbone.dtype_policy,
            name="logits",
        )

        # === Functional model ===
        inputs = backbone.input
        sequence = backbone(inputs)["sequence_output"]
        outputs = self.output_dense(self.output_dropout(sequence))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.label_names = label_names

    def _check_labels(self, x, y):
        if y is not None:
            check_word_labels(x, y, self.num_classes)

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto", **kwargs):
        """Defaults: Adam(1e-5), cross-entropy (mean over words) and accuracy
        over words, XLA with an accelerator."""
        if optimizer == "auto":
            optimizer = keras.optimizers.Adam(1e-5)
        if loss == "auto":
            # Mean over labelled pieces: the same loss whatever the padded
            # length (length-bucketed batches train as padded ones would).
            loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction="mean_with_sample_weight"
            )
        if metrics == "auto":
            # Weighted by the preprocessor's sample_weight: first pieces only.
            kwargs.setdefault(
                "weighted_metrics",
                [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
            )
            metrics = None
        kwargs.setdefault("jit_compile", default_jit_compile())
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    # Word lists of different lengths (the usual case) cannot be stacked
    # into the one array Keras makes of in-memory inputs: they are checked
    # here, then batched as `word_label_dataset` batches them. `batch_size`
    # may come first in `args`, as in Keras's signatures.
    def _as_word_batches(self, x, y, args, kwargs):
        if self.preprocessor is None or not is_ragged_word_lists(x):
            return x, y, args, kwargs
        self._check_x(x)
        self._check_labels(x, y)
        args, kwargs = list(args), dict(kwargs)
        batch_size = args[0] if args else kwargs.pop("batch_size", None)
        if args:
            args[0] = None
        return word_label_dataset(x, y, batch_size or 32), None, tuple(args), kwargs

    def fit(self, x=None, y=None, *args, **kwargs):
        if kwargs.get("validation_split") and is_ragged_word_lists(x) and y is not None:
            # Batched as a dataset below, which Keras cannot split: the last
            # fraction is held out here, as Keras would hold it out.
            cut = int(len(x) * (1.0 - kwargs.pop("validation_split")))
            kwargs["validation_data"] = (x[cut:], y[cut:])
            x, y = x[:cut], y[:cut]
        x, y, args, kwargs = self._as_word_batches(x, y, args, kwargs)
        validation = kwargs.get("validation_data")
        if isinstance(validation, tuple) and len(validation) == 2 and is_ragged_word_lists(validation[0]):
            kwargs["validation_data"] = self._as_word_batches(*validation, (), {})[0]
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        if not kwargs.get("_use_cached_eval_dataset"):  # not fit's per-epoch validation
            x, y, args, kwargs = self._as_word_batches(x, y, args, kwargs)
        return super().evaluate(x, y, *args, **kwargs)

    def predict(self, x=None, *args, **kwargs):
        x, _, args, kwargs = self._as_word_batches(x, None, args, kwargs)
        return super().predict(x, *args, **kwargs)

    def predict_word_labels(self, words, batch_size=32):
        """One predicted label per word; -1 for words cut by truncation."""
        if self.preprocessor is None:
            raise ValueError("`predict_word_labels` needs a preprocessor.")
        words = [example.split() if isinstance(example, str) else list(example) for example in words]
        if tf is None:
            # The preprocessor's Python path takes the word lists as they are.
            packed_words = words
        else:
            packed_words = tf.ragged.constant(words, dtype=tf.string)
        # Calling the preprocessor first also builds it (word_ids needs that).
        features = keras.tree.map_structure(keras.ops.convert_to_numpy, self.preprocessor(packed_words))
        word_ids = keras.ops.convert_to_numpy(self.preprocessor.word_ids(packed_words))
        if self.length_buckets:
            logits = predict_packed(
                self, features, batch_size, check_buckets(self.length_buckets), per_position_fill=0.0
            )
        elif tf is None:
            logits = keras.Model.predict(self, features, batch_size=batch_size, verbose=0)
        else:
            logits = self.predict(word_label_dataset(words, batch_size=batch_size), verbose=0)
        results = []
        for row, (example, ids) in enumerate(zip(words, word_ids)):
            labels = [-1] * len(example)
            for position in np.flatnonzero(ids >= 0):
                labels[ids[position]] = int(logits[row, position].argmax())
            results.append(labels)
        return results

    def get_config(self):
        config = super().get_config()
        config.update(
            {"num_classes": self.num_classes, "dropout": self.dropout, "label_names": self.label_names}
        )
        return config
