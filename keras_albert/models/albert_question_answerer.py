"""AlbertQuestionAnswerer: extractive span QA (SQuAD v1.1 and v2.0)."""

import keras
import numpy as np
from keras_hub.models import Task

from keras_albert.input_checks.task_inputs import TokenFeatureChecksMixin
from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_question_answerer_preprocessor import (
    AlbertQuestionAnswererPreprocessor,
)
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.models.jit_default import default_jit_compile
from keras_albert.models.length_buckets import DEFAULT_BUCKETS
from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import predict_packed
from keras_albert.models.question_answering_spans import best_answers
from keras_albert.presets.preset_resolution import PresetResolutionMixin


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertQuestionAnswerer(CompileConfigMixin, TokenFeatureChecksMixin, PresetResolutionMixin, Task):
    """Start and end logits for every position of every window.

    Outputs `{"start_logits", "end_logits"}`, each [batch, sequence]; train
    with the windows' `start_positions` / `end_positions` (position 0,
    [CLS], means "no answer in this window"). `answer(questions, contexts)`
    windows long contexts, predicts, and returns each example's best span
    as an exact substring of its context, its n-best list and, with
    `allow_no_answer=True` (SQuAD v2), "" when [CLS] wins by more than
    `null_threshold`.

    Example:
    >>> qa = keras_albert.AlbertQuestionAnswerer.from_preset(
    ...     "albert_tiny_en")  # doctest: +SKIP
    >>> qa.fit((["Who walked?"], ["Anne walked home."]), [("Anne", 0)])  # doctest: +SKIP
    >>> qa.answer(["Who walked?"], ["Anne walked home."])[0]["text"]  # doctest: +SKIP
    'Anne'
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertQuestionAnswererPreprocessor
    # `answer` pads each batch of windows to the smallest of these that
    # holds it; spans are read from real positions only, so answers are
    # unchanged (positions past a bucket get a logit no span can win with).
    length_buckets = DEFAULT_BUCKETS
    # `fit`/`predict` take windows; raw text goes through `answer`.
    raw_input_kind = "windows"

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.span_dense = keras.layers.Dense(
            2,
            kernel_initializer=albert_kernel_initializer(backbone.initializer_range),
            dtype=backbone.dtype_policy,
            name="span_logits",
        )

        # === Functional model ===
        inputs = backbone.input
        logits = self.span_dense(backbone(inputs)["sequence_output"])
        logits = keras.ops.cast(logits, "float32")
        outputs = {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto", **kwargs):
        """Defaults: Adam(3e-5), cross-entropy over positions for both ends."""
        if optimizer == "auto":
            optimizer = keras.optimizers.Adam(3e-5)
        if loss == "auto":
            loss = {
                name: keras.losses.SparseCategoricalCrossentropy(from_logits=True)
                for name in ("start_logits", "end_logits")
            }
        if metrics == "auto":
            metrics = {
                name: [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
                for name in ("start_logits", "end_logits")
            }
        kwargs.setdefault("jit_compile", default_jit_compile())
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def fit(self, x=None, y=None, *args, **kwargs):
        """Keras `fit`; `x=(questions, contexts)` with `y=answers` is windowed
        first (see `windowed_inputs`)."""
        x, y = self.windowed_inputs(x, y)
        validation = kwargs.get("validation_data")
        if isinstance(validation, tuple) and len(validation) == 2:
            kwargs["validation_data"] = self.windowed_inputs(*validation)
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        """Keras `evaluate`; `x=(questions, contexts)` is windowed first."""
        if not kwargs.get("_use_cached_eval_dataset"):  # not fit's per-epoch validation
            x, y = self.windowed_inputs(x, y)
        return super().evaluate(x, y, *args, **kwargs)

    def windowed_inputs(self, x, y=None):
        """`(features, {"start_logits", "end_logits"})` for raw
        `x=(questions, contexts)` and `y` (per example `(answer_text,
        answer_start)`, a SQuAD `{"text", "answer_start"}` dict, or None for
        no answer); other inputs are returned as they are."""
        if self.preprocessor is None or not _is_question_context_pair(x):
            return x, y
        answers = None if y is None else [_answer_pair(answer, index) for index, answer in enumerate(y)]
        windows = self.preprocessor.windows(x[0], x[1], answers)
        if answers is None:
            return windows.features, None
        return windows.features, {"start_logits": windows.start_positions, "end_logits": windows.end_positions}

    def answer(
        self,
        questions,
        contexts,
        n_best=20,
        max_answer_length=30,
        allow_no_answer=False,
        null_threshold=0.0,
        batch_size=32,
    ):
        """Answers each question from its context (see `best_answers`)."""
        if self.preprocessor is None:
            raise ValueError("`answer` needs an `AlbertQuestionAnswererPreprocessor`.")
        windows = self.preprocessor.windows(questions, contexts)
        if self.length_buckets:
            logits = predict_packed(
                self, windows.features, batch_size, check_buckets(self.length_buckets),
                per_position_fill=-1e9,
            )
        else:
            logits = self.predict(windows.features, batch_size=batch_size, verbose=0)
        return best_answers(
            windows,
            np.asarray(logits["start_logits"]),
            np.asarray(logits["end_logits"]),
            n_best=n_best,
            max_answer_length=max_answer_length,
            allow_no_answer=allow_no_answer,
            null_threshold=null_threshold,
        )


def _is_question_context_pair(x):
    return (
        isinstance(x, tuple) and len(x) == 2
        and all(isinstance(part, (list, tuple)) and all(isinstance(t, str) for t in part) for part in x)
    )


def _answer_pair(answer, index):
    if answer is None:
        return None
    if isinstance(answer, dict) and {"text", "answer_start"} <= set(answer):
        return answer["text"], answer["answer_start"]
    if isinstance(answer, (list, tuple)) and len(answer) == 2:
        return tuple(answer)
    raise ValueError(
        f"`y[{index}]` must be an answer: (answer_text, answer_start), a dict with 'text' and "
        f"'answer_start', or None for no answer. Received: {answer!r:.100}"
    )
