"""AlbertMaskedLM: the backbone with ALBERT's tied masked-LM head."""

import pathlib

import keras
from keras_hub.models import MaskedLM

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_masked_lm_preprocessor import AlbertMaskedLMPreprocessor
from keras_albert.models.compile_config import CompileConfigMixin
from keras_albert.models.jit_default import default_pretraining_jit_compile
from keras_albert.models.tied_masked_lm import load_masked_lm_head_weights
from keras_albert.models.tied_masked_lm import masked_lm_inputs
from keras_albert.models.tied_masked_lm import tied_masked_lm_head
from keras_albert.presets.preset_resolution import PresetResolutionMixin
from keras_albert.presets.preset_resolution import resolve_preset


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertMaskedLM(CompileConfigMixin, PresetResolutionMixin, MaskedLM):
    """Masked language model: predicts the tokens at `mask_positions`.

    Inputs are the backbone's plus `mask_positions` [batch, num_masked];
    outputs are logits [batch, num_masked, vocabulary_size]. The loss
    averages over real masked positions only (`sample_weight` is 0 for
    padded predictions), matching Google's `sum(w * CE) / sum(w)`.

    Example:
    >>> masked_lm = keras_albert.AlbertMaskedLM.from_preset(
    ...     "./my_albert_preset")  # doctest: +SKIP
    >>> masked_lm.fit(x=["a text to learn from"], batch_size=1)  # doctest: +SKIP
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertMaskedLMPreprocessor

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.masked_lm_head = tied_masked_lm_head(backbone)

        # === Functional model ===
        inputs = masked_lm_inputs(backbone)
        sequence_output = backbone(backbone.input)["sequence_output"]
        outputs = self.masked_lm_head(sequence_output, inputs["mask_positions"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    @classmethod
    def from_preset(cls, preset, *args, **kwargs):
        """Loads the preset; takes a saved pretrainer's MLM head when it has one.

        Converted checkpoints (`python -m keras_albert convert`) and
        pretraining runs save an `AlbertPretrainer`; its MLM head is the
        one this model needs, so the head is not started from scratch. It is
        read from the pretrainer's task weights; no pretrainer is built.
        """
        path = resolve_preset(preset)
        model = super().from_preset(path, *args, **kwargs)
        task = pathlib.Path(path) / "task.json"
        if task.is_file() and "AlbertPretrainer" in task.read_text(encoding="utf-8"):
            load_masked_lm_head_weights(model, pathlib.Path(path) / "task.weights.h5")
        return model

    def compile(
        self,
        optimizer="auto",
        loss="auto",
        *,
        weighted_metrics="auto",
        **kwargs,
    ):
        """Compiles with masked-LM defaults: Adam(5e-5), cross-entropy
        averaged over real masked positions, accuracy, XLA on (off on PyTorch,
        where it would mean `torch.compile`)."""
        if loss == "auto":
            loss = keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction="mean_with_sample_weight"
            )
        kwargs.setdefault("jit_compile", default_pretraining_jit_compile())
        super().compile(
            optimizer=optimizer,
            loss=loss,
            weighted_metrics=weighted_metrics,
            **kwargs,
        )
