"""AlbertPretrainer: masked-LM plus sentence-order (or next-sentence) heads."""

import keras
from keras_hub.models import Task

from keras_albert.layers.heads import AlbertSentenceOrderHead
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_masked_lm import masked_lm_inputs
from keras_albert.models.albert_masked_lm import tied_masked_lm_head
from keras_albert.models.preset_resolution import PresetResolutionMixin

SENTENCE_TASKS = ("sop", "nsp", "none")
# Output (and metric prefix) of the two-way head for each sentence task.
SENTENCE_OUTPUTS = {"sop": "sentence_order", "nsp": "next_sentence"}


def check_sentence_task(sentence_task):
    if sentence_task not in SENTENCE_TASKS:
        raise ValueError(
            f"`sentence_task` must be one of {SENTENCE_TASKS}. "
            f"Received: sentence_task={sentence_task!r}"
        )


def pretraining_batch(features, sentence_task="sop"):
    """Maps a batch of pretraining features to `(x, y, sample_weight)`.

    `features` uses the TFRecord names of Google's release (as yielded by
    `keras_albert.data.pretraining_dataset`); the result is what
    `AlbertPretrainer.fit` consumes. Padded prediction slots carry weight 0.

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
        sample_weight[output] = keras.ops.ones_like(
            features["masked_lm_weights"][:, 0]
        )
    return x, y, sample_weight


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertPretrainer(PresetResolutionMixin, Task):
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

    Args:
        backbone: an `AlbertBackbone`.
        sentence_task: `"sop"`, `"nsp"` or `"none"`.

    Example:
    >>> backbone = keras_albert.AlbertBackbone(vocabulary_size=100,
    ...     num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
    ...     intermediate_dim=32)
    >>> pretrainer = keras_albert.AlbertPretrainer(backbone)
    >>> sorted(pretrainer.output.keys())
    ['mlm', 'sentence_order']
    """

    backbone_cls = AlbertBackbone

    def __init__(self, backbone, sentence_task="sop", preprocessor=None, **kwargs):
        check_sentence_task(sentence_task)
        if preprocessor is not None:
            raise ValueError(
                "`AlbertPretrainer` reads tokenized pretraining batches "
                "(`pretraining_dataset(...).map(pretraining_batch)`) and takes "
                f"no preprocessor. Received: preprocessor={preprocessor!r}"
            )
        # Read by `compile`, which keras-hub's Task calls inside __init__.
        self.sentence_task = sentence_task

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
        accuracy per head, XLA on. `optimizer="auto"` is Adam(1e-4); pass
        `keras_albert.training.AlbertLamb` for the paper's recipe."""
        outputs = ["mlm"]
        if self.sentence_task != "none":
            outputs.append(SENTENCE_OUTPUTS[self.sentence_task])
        if optimizer == "auto":
            optimizer = keras.optimizers.Adam(1e-4)
        if loss == "auto":
            loss = {
                name: keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, reduction="mean_with_sample_weight"
                )
                for name in outputs
            }
        if weighted_metrics == "auto":
            weighted_metrics = {
                name: [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
                for name in outputs
            }
            if len(outputs) == 1:
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
        kwargs.setdefault("jit_compile", True)
        super().compile(
            optimizer=optimizer,
            loss=loss,
            weighted_metrics=weighted_metrics,
            **kwargs,
        )

    def get_config(self):
        config = super().get_config()
        config.update({"sentence_task": self.sentence_task})
        return config
