"""AlbertClassifier: classification or regression on the pooled output."""

import keras
from keras_hub.models import TextClassifier

from keras_albert.input_checks.task_inputs import TokenFeatureChecksMixin
from keras_albert.input_checks.task_inputs import array_shape
from keras_albert.input_checks.task_inputs import check_class_labels
from keras_albert.input_checks.task_inputs import check_not_one_hot
from keras_albert.input_checks.task_inputs import check_regression_targets
from keras_albert.input_checks.task_inputs import check_same_count
from keras_albert.input_checks.task_inputs import uses_sparse_labels
from keras_albert.input_checks.task_inputs import with_label_checks
from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.models.jit_default import default_jit_compile
from keras_albert.models.label_names import LabelNamesMixin
from keras_albert.models.label_names import check_label_names
from keras_albert.models.length_buckets import LengthBucketedMixin
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.backend import is_grain_dataset
from keras_albert.utils.backend import is_tf_dataset
from keras_albert.utils.validation import check_choice
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate

POOLING_CHOICES = ("cls", "mean")


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertClassifier(
    CompileConfigMixin, LabelNamesMixin, TokenFeatureChecksMixin, LengthBucketedMixin, PresetResolutionMixin, TextClassifier
):
    """ALBERT with a dense layer on the pooled ([CLS]) output, or on the
    mean of every token's output.

    `num_classes=1` makes it a regressor (STS-B style): one unsquashed
    output trained with mean squared error. Otherwise it outputs
    `num_classes` logits trained with sparse categorical cross-entropy.

    Args:
        backbone: an `AlbertBackbone`.
        num_classes: int, number of classes; 1 for regression.
        preprocessor: an `AlbertTextClassifierPreprocessor` or None (then
            `fit`/`predict` take token_ids/segment_ids/padding_mask).
        activation: None (logits) or an activation name for the outputs.
        dropout: float, dropout on the pooled output (0.1 as Google's
            fine-tuning code).
        label_names: None or a list of `num_classes` distinct strings, the
            name of each class id. Saved in the config (and so in presets);
            the serving SavedModel then outputs the predicted name as
            `labels`. Not for regressors.
        pooling: "cls" (ALBERT's pooler on [CLS], as Google's fine-tuning
            code) or "mean" (the average of the sequence output over the
            real, unpadded tokens; the pooler is not used). "mean" suits
            long documents: with LSH attention [CLS] attends only to the
            tokens hashed into its bucket, while the mean reads every one.

    Example:
    >>> classifier = keras_albert.AlbertClassifier.from_preset(
    ...     "./my_albert_preset", num_classes=4)  # doctest: +SKIP
    >>> classifier.fit(x=["a text", "another"], y=[0, 3])  # doctest: +SKIP
    >>> classifier.predict(["raw strings work"])  # doctest: +SKIP
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertTextClassifierPreprocessor
    # Raw-text `predict`/`evaluate` pad each batch to the smallest of
    # `length_buckets` that holds it (see `LengthBucketedMixin`).
    length_buckets = LengthBucketedMixin.length_buckets
    # `fit`/`predict`/`evaluate` check raw inputs as texts (or text pairs)
    # and labels before tracing (see `TokenFeatureChecksMixin`).
    raw_input_kind = "texts"

    def __init__(
        self,
        backbone,
        num_classes,
        preprocessor=None,
        activation=None,
        dropout=0.1,
        label_names=None,
        pooling="cls",
        **kwargs,
    ):
        check_positive_int("num_classes", num_classes)
        check_choice("pooling", pooling, POOLING_CHOICES)
        check_rate("dropout", dropout)
        label_names = check_label_names(label_names, num_classes, regression=num_classes == 1)
        # Read by `compile`, which keras-hub's Task calls inside __init__.
        self.num_classes = num_classes

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.output_dropout = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.output_dense = keras.layers.Dense(
            num_classes,
            activation=activation,
            kernel_initializer=albert_kernel_initializer(
                backbone.initializer_range
            ),
            dtype=backbone.dtype_policy,
            name="logits",
        )

        if pooling == "mean":
            self.mean_pooling = keras.layers.GlobalAveragePooling1D(
                dtype=backbone.dtype_policy, name="mean_pooling"
            )

        # === Functional model ===
        inputs = backbone.input
        backbone_outputs = backbone(inputs)
        if pooling == "mean":
            pooled = self.mean_pooling(
                backbone_outputs["sequence_output"],
                mask=keras.ops.cast(inputs["padding_mask"], "bool"),
            )
        else:
            pooled = backbone_outputs["pooled_output"]
        outputs = self.output_dense(self.output_dropout(pooled))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.activation = keras.activations.get(activation)
        self.dropout = dropout
        self.label_names = label_names
        self.pooling = pooling

    def _check_labels(self, x, y):
        if y is None:
            return
        check_same_count(x, y)
        if self.is_regression:
            check_regression_targets(y)
        elif uses_sparse_labels(self):
            # Other losses (one-hot, soft targets) take other labels.
            check_not_one_hot(array_shape(y), self.num_classes)
            check_class_labels(y, self.num_classes)

    def _with_label_checks(self, x):
        if (is_tf_dataset(x) or is_grain_dataset(x)) and not self.is_regression and uses_sparse_labels(self):
            return with_label_checks(x, self.num_classes)
        return x

    @property
    def is_regression(self):
        return self.num_classes == 1

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto", **kwargs):
        """Compiles with fine-tuning defaults.

        Defaults: Adam(1e-5); sparse categorical cross-entropy and accuracy
        for classification, mean squared error and mean absolute error for
        regression; `jit_compile` XLA with an accelerator, off on CPU-only
        machines, where it measured no faster (see `jit_default`).
        """
        if optimizer == "auto":
            optimizer = keras.optimizers.Adam(1e-5)
        if self.is_regression:
            if loss == "auto":
                loss = keras.losses.MeanSquaredError()
            if metrics == "auto":
                metrics = [keras.metrics.MeanAbsoluteError()]
        kwargs.setdefault("jit_compile", default_jit_compile())
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_classes": self.num_classes,
                "activation": keras.activations.serialize(self.activation),
                "dropout": self.dropout,
                "label_names": self.label_names,
                "pooling": self.pooling,
            }
        )
        return config
