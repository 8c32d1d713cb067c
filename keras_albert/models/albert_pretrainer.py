"""AlbertPretrainer: masked-LM plus sentence-order (or next-sentence) heads."""

import sys

import keras
import numpy as np
from keras_hub.models import Task

from keras_albert.layers.heads import AlbertSentenceOrderHead
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.models.jit_default import default_pretraining_jit_compile
from keras_albert.models.preprocessor_inputs import int32_padding_mask
from keras_albert.models.tied_masked_lm import masked_lm_inputs
from keras_albert.models.tied_masked_lm import tied_masked_lm_head
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.utils.backend import is_tf_tensor
from keras_albert.utils.validation import check_positive_int

SENTENCE_TASKS = ("sop", "nsp", "none")
# Output (and metric prefix) of the two-way head for each sentence task.
SENTENCE_OUTPUTS = {"sop": "sentence_order", "nsp": "next_sentence"}
# Inputs of the optional sentence-embedding head: a second batch of short
# texts, packed like the backbone's inputs.
EMBEDDING_INPUTS = ("embedding_token_ids", "embedding_segment_ids", "embedding_padding_mask")


def check_sentence_task(sentence_task):
    if sentence_task not in SENTENCE_TASKS:
        raise ValueError(
            f"`sentence_task` must be one of {SENTENCE_TASKS}. "
            f"Received: sentence_task={sentence_task!r}"
        )


def pretraining_batch(features, sentence_task="sop", ones_like=None):
    """Maps a batch of pretraining features to `(x, y, sample_weight)`.

    `features` uses the TFRecord names of Google's release (as yielded by
    `keras_albert.data.pretraining_dataset`); the result is what
    `AlbertPretrainer.fit` consumes. Padded prediction slots carry weight 0.
    `ones_like` makes the sentence task's unit weights (by default of the
    features' own kind: NumPy, a TF tensor in a tf.data map whatever the
    Keras backend, else a backend tensor).

    Example:
    >>> dataset = pretraining_dataset("train-*.tfrecord", 32)  # doctest: +SKIP
    >>> dataset = dataset.map(pretraining_batch)  # doctest: +SKIP
    """
    check_sentence_task(sentence_task)
    x = {
        "token_ids": features["input_ids"],
        "segment_ids": features["segment_ids"],
        "padding_mask": features["input_mask"],
        "mask_positions": features["masked_lm_positions"],
    }
    y = {"mlm": features["masked_lm_ids"]}
    sample_weight = {"mlm": features["masked_lm_weights"]}
    if sentence_task != "none":
        output = SENTENCE_OUTPUTS[sentence_task]
        y[output] = features["next_sentence_labels"][:, 0]
        # Explicit unit weights: Keras wants one weight structure per output.
        sample_weight[output] = (ones_like or _ones_like)(
            features["masked_lm_weights"][:, 0]
        )
    return x, y, sample_weight


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertPretrainer(CompileConfigMixin, PresetResolutionMixin, Task):
    """ALBERT's pretraining model: masked-LM and a sentence-level task.

    The loss is the sum of the masked-LM cross-entropy (averaged over the
    real masked positions, `sum(w * CE) / sum(w)` as in Google's code) and
    the two-way sentence loss on the pooled output:

    - `sentence_task="sop"` (default): sentence-order prediction, the
      ALBERT paper's objective (label 1: the two segments were swapped).
    - `"nsp"`: BERT's next-sentence prediction (label 1: segment B came
      from another document).
    - `"none"`: masked-LM only, the paper's ablation.

    Inputs are the backbone's plus `mask_positions` [batch, predictions];
    outputs are a dict: `"mlm"` logits [batch, predictions, vocabulary]
    and, unless `sentence_task="none"`, `"sentence_order"` (or
    `"next_sentence"`) logits [batch, 2]. The heads are Google's
    `cls/predictions` (tied to the word embeddings) and
    `cls/seq_relationship`. Metrics: `mlm_loss`, `mlm_accuracy`,
    `sentence_order_loss`, `sentence_order_accuracy`.

    Feed it batches from `pretraining_dataset(...).map(pretraining_batch)`.

    With `sentence_embedding_dim=D` it also learns a teacher's sentence
    embeddings (sentence-level distillation, for a teacher whose tokenizer
    differs): a second batch of short texts (inputs `embedding_token_ids`,
    `embedding_segment_ids`, `embedding_padding_mask`) goes through the
    same backbone, and the pooled output, projected to D and normalised,
    is pulled towards the teacher's unit vector (output
    `sentence_embedding`, loss 1 - cosine, metric `sentence_embedding_cosine`).
    Fine-tuned classifiers start from that pooled output.

    Args:
        backbone: an `AlbertBackbone`.
        sentence_task: `"sop"`, `"nsp"` or `"none"`.
        sentence_embedding_dim: None, or the teacher's embedding size.

    Example:
    >>> backbone = keras_albert.AlbertBackbone(vocabulary_size=100,
    ...     num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
    ...     intermediate_dim=32)
    >>> pretrainer = keras_albert.AlbertPretrainer(backbone)
    >>> sorted(pretrainer.output.keys())
    ['mlm', 'sentence_order']
    """

    backbone_cls = AlbertBackbone

    def __init__(self, backbone, sentence_task="sop", preprocessor=None,
                 sentence_embedding_dim=None, **kwargs):
        check_sentence_task(sentence_task)
        if sentence_embedding_dim is not None:
            check_positive_int("sentence_embedding_dim", sentence_embedding_dim)
        if preprocessor is not None:
            raise ValueError(
                "`AlbertPretrainer` reads tokenized pretraining batches "
                "(`pretraining_dataset(...).map(pretraining_batch)`) and takes "
                f"no preprocessor. Received: preprocessor={preprocessor!r}"
            )
        # Read by `compile`, which keras-hub's Task calls inside __init__.
        self.sentence_task = sentence_task
        self.sentence_embedding_dim = sentence_embedding_dim

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = None
        self.masked_lm_head = tied_masked_lm_head(backbone)
        self.sentence_head = None
        if sentence_task != "none":
            self.sentence_head = AlbertSentenceOrderHead(
                initializer_range=backbone.initializer_range,
                dtype=backbone.dtype_policy,
                name="sentence_order_head",
            )

        # === Functional model ===
        inputs = masked_lm_inputs(backbone)
        backbone_outputs = backbone(backbone.input)
        outputs = {
            "mlm": self.masked_lm_head(
                backbone_outputs["sequence_output"], inputs["mask_positions"]
            )
        }
        if self.sentence_head is not None:
            outputs[SENTENCE_OUTPUTS[sentence_task]] = self.sentence_head(
                backbone_outputs["pooled_output"]
            )
        self.sentence_embedding_head = None
        if sentence_embedding_dim is not None:
            self.sentence_embedding_head = keras.layers.Dense(
                sentence_embedding_dim,
                kernel_initializer=keras.initializers.TruncatedNormal(
                    stddev=backbone.initializer_range),
                dtype=backbone.dtype_policy,
                name="sentence_embedding_head",
            )
            for name in EMBEDDING_INPUTS:
                inputs[name] = keras.Input(shape=(None,), dtype="int32", name=name)
            pooled = backbone({
                "token_ids": inputs["embedding_token_ids"],
                "segment_ids": inputs["embedding_segment_ids"],
                "padding_mask": inputs["embedding_padding_mask"],
            })["pooled_output"]
            outputs["sentence_embedding"] = keras.ops.normalize(
                keras.ops.cast(self.sentence_embedding_head(pooled), "float32"), axis=-1
            )
        # Losses in float32 under mixed precision (bf16 logits lose the
        # resolution cross-entropy over a 30k vocabulary needs).
        outputs = {k: keras.ops.cast(v, "float32") for k, v in outputs.items()}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    def compile(
        self,
        optimizer="auto",
        loss="auto",
        *,
        weighted_metrics="auto",
        **kwargs,
    ):
        """Compiles with pretraining defaults: summed cross-entropies,
        accuracy per head, XLA on (off on PyTorch, where it would mean
        `torch.compile`). `optimizer="auto"` is Adam(1e-4); pass
        `keras_albert.training.AlbertLamb` for the paper's recipe."""
        outputs = ["mlm"]
        if self.sentence_task != "none":
            outputs.append(SENTENCE_OUTPUTS[self.sentence_task])
        embedding = getattr(self, "sentence_embedding_dim", None) is not None
        if optimizer == "auto":
            optimizer = keras.optimizers.Adam(1e-4)
        if loss == "auto":
            loss = {
                name: keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, reduction="mean_with_sample_weight"
                )
                for name in outputs
            }
            if embedding:
                loss["sentence_embedding"] = cosine_distance
        if weighted_metrics == "auto":
            weighted_metrics = {
                name: [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
                for name in outputs
            }
            if embedding:
                weighted_metrics["sentence_embedding"] = [
                    keras.metrics.CosineSimilarity(name="cosine")
                ]
            if len(outputs) == 1 and not embedding:
                # Keras drops the output prefix for a single output and then
                # reports only "loss"; keep the names of the other tasks.
                weighted_metrics = {
                    "mlm": [
                        keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy"),
                        keras.metrics.SparseCategoricalCrossentropy(
                            from_logits=True, name="mlm_loss"
                        ),
                    ]
                }
        kwargs.setdefault("jit_compile", default_pretraining_jit_compile())
        super().compile(
            optimizer=optimizer,
            loss=loss,
            weighted_metrics=weighted_metrics,
            **kwargs,
        )

    def get_config(self):
        config = super().get_config()
        config.update({
            "sentence_task": self.sentence_task,
            "sentence_embedding_dim": self.sentence_embedding_dim,
        })
        return config


def _ones_like(values):
    # `keras.ops` makes the backend's tensors: on JAX or PyTorch those cannot
    # enter a tf.data map's graph, which hands TF tensors.
    if isinstance(values, np.ndarray):
        return np.ones_like(values)
    if is_tf_tensor(values):
        return sys.modules["tensorflow"].ones_like(values)
    return keras.ops.ones_like(values)


def cosine_distance(y_true, y_pred):
    """1 - cosine similarity per example (both sides unit vectors)."""
    return 1.0 - keras.ops.sum(
        keras.ops.normalize(y_true, axis=-1) * y_pred, axis=-1
    )


def embedding_batch(packed, vectors):
    """Adds packed short texts and their teacher vectors to a pretraining batch.

    `packed` is a preprocessor's output (`token_ids`, `segment_ids`,
    `padding_mask`); returns a function `(x, y, sample_weight) -> (x, y,
    sample_weight)` for `tf.data.Dataset.zip(...).map(...)` users, or use it
    directly on one batch.
    """
    def add(x, y, sample_weight):
        x = dict(x)
        y = dict(y)
        sample_weight = dict(sample_weight)
        x["embedding_token_ids"] = packed["token_ids"]
        x["embedding_segment_ids"] = packed["segment_ids"]
        # Both of the inputs' own kind, so the map runs in tf.data on any backend.
        x["embedding_padding_mask"] = int32_padding_mask(packed)["padding_mask"]
        y["sentence_embedding"] = vectors
        sample_weight["sentence_embedding"] = _ones_like(vectors[:, 0])
        return x, y, sample_weight

    return add
