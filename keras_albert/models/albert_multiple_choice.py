"""AlbertMultipleChoice: one score per choice (RACE, SWAG style)."""

import keras
from keras_hub.models import Task

from keras_albert.input_checks.task_inputs import TokenFeatureChecksMixin
from keras_albert.input_checks.task_inputs import check_class_labels
from keras_albert.input_checks.task_inputs import check_same_count
from keras_albert.input_checks.task_inputs import choice_count
from keras_albert.layers.choice_reshaping import ChoiceScores
from keras_albert.layers.choice_reshaping import FlattenChoices
from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_multiple_choice_preprocessor import (
    AlbertMultipleChoicePreprocessor,
)
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.models.jit_default import default_jit_compile
from keras_albert.models.length_buckets import LengthBucketedMixin
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertMultipleChoice(
    CompileConfigMixin, TokenFeatureChecksMixin, LengthBucketedMixin, PresetResolutionMixin, Task
):
    """Scores every (context, choice) pair; softmax across the choices.

    Inputs are the backbone's with a choices axis, [batch, num_choices,
    sequence]; the output is [batch, num_choices] logits, trained with
    sparse categorical cross-entropy against the index of the right choice.
    The number of choices may change between batches. `predict` and
    `evaluate` on raw dicts pad each batch to the smallest of
    `length_buckets` that holds its longest choice (same outputs).

    Example:
    >>> model = keras_albert.AlbertMultipleChoice.from_preset(
    ...     "albert_tiny_en")  # doctest: +SKIP
    >>> model.fit({"context": contexts, "question": questions,
    ...            "choices": choices}, answers)  # doctest: +SKIP
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertMultipleChoicePreprocessor
    # Inputs are checked before tracing (see `TokenFeatureChecksMixin`).
    raw_input_kind = "choices"
    feature_rank = 3

    def __init__(self, backbone, preprocessor=None, dropout=0.1, **kwargs):
        check_rate("dropout", dropout)
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.flatten_choices = FlattenChoices(name="flatten_choices")
        self.output_dropout = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="output_dropout"
        )
        self.output_dense = keras.layers.Dense(
            1,
            kernel_initializer=albert_kernel_initializer(backbone.initializer_range),
            dtype=backbone.dtype_policy,
            name="choice_score",
        )
        self.choice_scores = ChoiceScores(name="choice_scores")

        # === Functional model ===
        inputs = {
            name: keras.Input(shape=(None, None), dtype="int32", name=name)
            for name in ("token_ids", "segment_ids", "padding_mask")
        }
        pooled = backbone(self.flatten_choices(inputs))["pooled_output"]
        scores = self.output_dense(self.output_dropout(pooled))
        outputs = self.choice_scores(scores, inputs["token_ids"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.dropout = dropout

    def _check_labels(self, x, y):
        # The label is the index of the right choice.
        num_choices = choice_count(x)
        if y is not None and num_choices is not None:
            check_same_count(x, y)
            check_class_labels(y, num_choices)

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto", **kwargs):
        """Defaults: Adam(1e-5), cross-entropy over choices, accuracy, XLA with an accelerator."""
        if optimizer == "auto":
            optimizer = keras.optimizers.Adam(1e-5)
        if loss == "auto":
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        if metrics == "auto":
            metrics = [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
        kwargs.setdefault("jit_compile", default_jit_compile())
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update({"dropout": self.dropout})
        return config
