"""Distiller: a student learns from a frozen ALBERT teacher, layer by layer."""

import keras
from keras import ops

from keras_albert.distill.layer_map import resolve_layer_map
from keras_albert.distill.losses import attention_transfer_loss
from keras_albert.distill.losses import feature_map_loss
from keras_albert.distill.losses import hard_mlm_loss
from keras_albert.distill.losses import soft_mlm_loss
from keras_albert.utils.validation import check_finite_number
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_number

BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")
LOSS_NAMES = ("feature_loss", "attention_loss", "mlm_distill_loss", "mlm_loss")




def _check_masked_lm(name, model):
    if not (hasattr(model, "backbone") and hasattr(model, "masked_lm_head")):
        raise ValueError(
            f"`{name}` must be a masked-LM task with `backbone` and "
            "`masked_lm_head` (an `AlbertMaskedLM` or `AlbertPretrainer`). "
            f"Received: {name}={type(model).__name__}"
        )


class Distiller(keras.Model):
    """MobileBERT-style knowledge distillation, trained with `fit`.

    The loss is a weighted sum of, for every `(student_layer,
    teacher_layer)` pair of `layer_map`:

    - feature-map transfer (`feature_weight`): MSE between the normalised
      layer outputs plus mean and variance terms (`feature_map_loss`); a
      learned linear projection maps the student's width to the teacher's
      when they differ (it is not part of the student);
    - attention transfer (`attention_weight`): KL between the teacher's and
      the student's attention distributions, head by head (equal head
      counts needed);

    and pre-training distillation (`mlm_weight`): masked-LM loss against
    `alpha` x the teacher's soft predictions (KL at `temperature`) plus
    `1 - alpha` x the true tokens.

    The teacher is frozen. `set_stage(k)` restricts training to one step of
    MobileBERT's progressive schedule (see `set_stage`); compile after it.
    Data: pretraining batches `(x, {"mlm": ids}, {"mlm": weights})` from
    `pretraining_batch(features, sentence_task="none")`. Build and fit
    inside a `tf.distribute` strategy's scope to train on several devices.

    Args:
        teacher: `AlbertMaskedLM` or `AlbertPretrainer` (frozen here).
        student: `AlbertMaskedLM` with a (possibly MobileBERT-style) backbone.
        layer_map: None (spread evenly), dict or list of pairs.
        feature_weight, attention_weight, mlm_weight: floats >= 0.
        alpha: float in [0, 1], weight of the teacher's soft predictions.
        temperature: float > 0.
        mean_weight, variance_weight: floats, feature-map extra terms.
        hidden_projection: bool; False forbids a projection (then widths
            must match).

    Example:
    >>> distiller = Distiller(teacher, student)  # doctest: +SKIP
    >>> distiller.compile(keras.optimizers.Adam(1e-3))  # doctest: +SKIP
    >>> distiller.fit(batches, steps_per_epoch=100)  # doctest: +SKIP
    >>> student.save_to_preset("my_student")  # doctest: +SKIP
    """

    def __init__(self, teacher, student, layer_map=None, feature_weight=1.0,
                 attention_weight=1.0, mlm_weight=1.0, alpha=0.5, temperature=1.0,
                 mean_weight=1.0, variance_weight=1.0, hidden_projection=True, **kwargs):
        super().__init__(**kwargs)
        _check_masked_lm("teacher", teacher)
        _check_masked_lm("student", student)
        for name, value in (("feature_weight", feature_weight),
                            ("attention_weight", attention_weight),
                            ("mlm_weight", mlm_weight),
                            ("mean_weight", mean_weight),
                            ("variance_weight", variance_weight)):
            check_finite_number(name, value)
        check_fraction("alpha", alpha)
        check_positive_number("temperature", temperature)
        teacher_backbone, student_backbone = teacher.backbone, student.backbone
        self.layer_map = resolve_layer_map(
            layer_map, student_backbone.num_layers, teacher_backbone.num_layers)
        if attention_weight and student_backbone.num_heads != teacher_backbone.num_heads:
            raise ValueError(
                "`attention_weight` > 0 compares attention head by head, so student "
                "and teacher need the same number of heads. Received: "
                f"attention_weight={attention_weight}, student num_heads="
                f"{student_backbone.num_heads}, teacher num_heads="
                f"{teacher_backbone.num_heads}. Use a student with "
                f"{teacher_backbone.num_heads} heads or attention_weight=0."
            )
        if mlm_weight and student_backbone.vocabulary_size != teacher_backbone.vocabulary_size:
            raise ValueError(
                "`mlm_weight` > 0 compares predictions over the vocabulary, so "
                "student and teacher need the same vocabulary. Received: "
                f"student vocabulary_size={student_backbone.vocabulary_size}, "
                f"teacher vocabulary_size={teacher_backbone.vocabulary_size}."
            )
        widths_differ = student_backbone.hidden_dim != teacher_backbone.hidden_dim
        if feature_weight and widths_differ and not hidden_projection:
            raise ValueError(
                "Feature-map transfer needs equal widths or a projection. Received: "
                f"hidden_projection={hidden_projection!r} with student hidden_dim="
                f"{student_backbone.hidden_dim}, teacher hidden_dim="
                f"{teacher_backbone.hidden_dim}. Pass hidden_projection=True or "
                "feature_weight=0."
            )
        self.teacher = teacher
        self.student = student
        self.teacher.trainable = False
        self.feature_weight = float(feature_weight)
        self.attention_weight = float(attention_weight)
        self.mlm_weight = float(mlm_weight)
        self.alpha = float(alpha)
        self.temperature = float(temperature)
        self.mean_weight = float(mean_weight)
        self.variance_weight = float(variance_weight)
        self._same_width = not widths_differ
        self._same_heads = student_backbone.num_heads == teacher_backbone.num_heads
        self.projection = None
        if feature_weight and widths_differ:
            self.projection = keras.layers.Dense(
                teacher_backbone.hidden_dim, name="hidden_projection")
            self.projection.build((None, None, student_backbone.hidden_dim))
        self.stage = None
        reported = ["mlm_distill_loss", "mlm_loss"]
        if feature_weight or self._same_width:
            reported.append("feature_loss")
        if attention_weight or self._same_heads:
            reported.append("attention_loss")
        self.trackers = {
            name: keras.metrics.Mean(name=name) for name in LOSS_NAMES if name in reported}
        self.set_stage(None)

    # === Progressive schedule ===

    @property
    def num_stages(self):
        """Layer-wise stages before the final, whole-model one."""
        return len(self.layer_map)

    def _student_parts(self):
        """Student sublayers by role, in bottom-up order."""
        backbone = self.student.backbone
        encoder = backbone.encoder
        return backbone, encoder

    def stage_layers(self, stage):
        """Names of the student parts stage `stage` trains (None: all).

        Stage k trains what lies between mapped student layer k-1's output
        and mapped layer k's output: the sublayers of those virtual layers
        (and the embeddings at stage 0). A sublayer shared with a lower
        layer is trained with layer k, since it is layer k's weights too.
        """
        backbone, encoder = self._student_parts()
        if stage is None:
            return None
        first = 0 if stage == 0 else self.layer_map[stage - 1][0] + 1
        last = self.layer_map[stage][0]
        names = ["embeddings"] if stage == 0 else []
        for layer in range(first, last + 1):
            for attention_owner, feed_forward_owner in encoder.plan[layer]:
                names.append(encoder.attention_sublayers[attention_owner].name)
                names.append(encoder.feed_forward_sublayers[feed_forward_owner].name)
        return sorted(set(names))

    def set_stage(self, stage):
        """Selects what trains: stage k in [0, num_stages) trains mapped
        student layer k alone on its feature/attention losses, every other
        student weight frozen (the projection trains too); None trains the
        whole student on every loss. Compile again after changing stages.
        """
        if stage is not None and (
            isinstance(stage, bool) or not isinstance(stage, int)
            or not 0 <= stage < self.num_stages
        ):
            raise ValueError(
                f"`stage` must be None or an int in [0, {self.num_stages - 1}] "
                f"(one per layer_map entry). Received: stage={stage!r}"
            )
        self.stage = stage
        backbone, encoder = self._student_parts()
        self.student.trainable = True
        # The pooler feeds no distillation loss; gradients would be None.
        backbone.pooler.trainable = False
        if stage is None:
            return
        trained = set(self.stage_layers(stage))
        self.student.masked_lm_head.trainable = False
        backbone.embeddings.trainable = "embeddings" in trained
        for sublayer in list(encoder.attention_sublayers.values()) + list(
            encoder.feed_forward_sublayers.values()
        ):
            sublayer.trainable = sublayer.name in trained

    # === Training ===

    def call(self, inputs, training=False):
        features = {name: inputs[name] for name in BACKBONE_INPUTS}
        teacher = self.teacher.backbone.distillation_outputs(features, training=False)
        student = self.student.backbone.distillation_outputs(features, training=training)
        outputs = {
            "student_layers": [student["encoder_outputs"][s] for s, _ in self.layer_map],
            "teacher_layers": [
                ops.stop_gradient(teacher["encoder_outputs"][t]) for _, t in self.layer_map],
            "student_attention": [
                student["attention_probabilities"][s] for s, _ in self.layer_map],
            "teacher_attention": [
                ops.stop_gradient(teacher["attention_probabilities"][t])
                for _, t in self.layer_map],
        }
        if self.projection is not None:
            outputs["student_layers"] = [self.projection(h) for h in outputs["student_layers"]]
        if "mask_positions" in inputs:
            positions = inputs["mask_positions"]
            outputs["student_mlm"] = self.student.masked_lm_head(
                student["sequence_output"], positions)
            outputs["teacher_mlm"] = ops.stop_gradient(self.teacher.masked_lm_head(
                teacher["sequence_output"], positions))
        return outputs

    def distillation_losses(self, inputs, y_pred, labels=None, weights=None):
        """Unweighted losses `{name: scalar}` for the current stage."""
        mask = inputs["padding_mask"]
        pairs = range(len(self.layer_map)) if self.stage is None else [self.stage]
        losses = {}
        # Reported whenever shapes allow, even at weight 0 (for comparison).
        if self.feature_weight or self._same_width:
            losses["feature_loss"] = ops.mean(ops.stack([
                feature_map_loss(y_pred["student_layers"][i], y_pred["teacher_layers"][i],
                                 mask, self.mean_weight, self.variance_weight)
                for i in pairs]))
        if self.attention_weight or self._same_heads:
            losses["attention_loss"] = ops.mean(ops.stack([
                attention_transfer_loss(y_pred["student_attention"][i],
                                        y_pred["teacher_attention"][i], mask)
                for i in pairs]))
        if "student_mlm" in y_pred:
            if weights is None:
                weights = ops.ones(ops.shape(inputs["mask_positions"]), "float32")
            losses["mlm_distill_loss"] = soft_mlm_loss(
                y_pred["student_mlm"], y_pred["teacher_mlm"], weights, self.temperature)
            if labels is not None:
                losses["mlm_loss"] = hard_mlm_loss(y_pred["student_mlm"], labels, weights)
        return losses

    def total_loss(self, losses):
        total = ops.zeros((), "float32")
        if self.feature_weight:
            total += self.feature_weight * losses["feature_loss"]
        if self.attention_weight:
            total += self.attention_weight * losses["attention_loss"]
        # The progressive stages transfer layers only; the final one adds MLM.
        if self.stage is None and self.mlm_weight and "mlm_distill_loss" in losses:
            mlm = self.alpha * losses["mlm_distill_loss"]
            if "mlm_loss" in losses and self.alpha < 1:
                mlm += (1 - self.alpha) * losses["mlm_loss"]
            total += self.mlm_weight * mlm
        return total

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        labels = y.get("mlm") if isinstance(y, dict) else y
        weights = sample_weight.get("mlm") if isinstance(sample_weight, dict) else sample_weight
        losses = self.distillation_losses(x, y_pred, labels, weights)
        for name, value in losses.items():
            if name in self.trackers:
                self.trackers[name].update_state(value)
        total = self.total_loss(losses)
        return ops.convert_to_tensor(total, "float32") / _replicas()

    def get_config(self):
        # The teacher and student are saved on their own (presets).
        raise NotImplementedError("Save the student with `student.save_to_preset`.")


def _replicas():
    """Under tf.distribute, Keras sums gradients over replicas, so each
    replica's mean loss counts 1 / replicas of the global one. JAX's
    `keras.distribution` computes one loss over the global batch."""
    if keras.config.backend() != "tensorflow":
        return 1
    import tensorflow as tf

    return tf.distribute.get_strategy().num_replicas_in_sync
