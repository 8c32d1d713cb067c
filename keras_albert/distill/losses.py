"""Distillation losses; each is exactly zero when student equals teacher.

All take a `padding_mask` [batch, seq] and average over real tokens only.
"""

from keras import ops

# Keeps log() finite on padded keys, whose probability is exactly zero.
_LOG_EPSILON = 1e-12
# Variance floor of the parameter-free normalisation.
_NORM_EPSILON = 1e-6


def _masked_token_mean(values, padding_mask):
    """Mean of `values` [batch, seq] over positions where the mask is 1."""
    mask = ops.cast(padding_mask, "float32")
    return ops.sum(values * mask) / ops.maximum(ops.sum(mask), 1.0)


def _moments(hidden):
    mean = ops.mean(hidden, axis=-1, keepdims=True)
    variance = ops.mean(ops.square(hidden - mean), axis=-1, keepdims=True)
    return mean, variance


def feature_map_loss(student, teacher, padding_mask, mean_weight=1.0, variance_weight=1.0):
    """MobileBERT's feature-map transfer on one layer's outputs.

    MSE between the two outputs after a parameter-free normalisation (each
    token's vector to zero mean, unit variance), plus the squared
    difference of the per-token means and the absolute difference of the
    per-token variances (MobileBERT's mean and variance terms).

    Args:
        student, teacher: [batch, seq, H] (same H: project the student first).
        padding_mask: [batch, seq].
        mean_weight, variance_weight: floats, weights of the two extra terms.
    """
    student = ops.cast(student, "float32")
    teacher = ops.cast(teacher, "float32")
    student_mean, student_variance = _moments(student)
    teacher_mean, teacher_variance = _moments(teacher)
    student_normed = (student - student_mean) * ops.rsqrt(student_variance + _NORM_EPSILON)
    teacher_normed = (teacher - teacher_mean) * ops.rsqrt(teacher_variance + _NORM_EPSILON)
    mse = ops.mean(ops.square(student_normed - teacher_normed), axis=-1)
    mean_term = ops.square(student_mean - teacher_mean)[..., 0]
    variance_term = ops.abs(student_variance - teacher_variance)[..., 0]
    per_token = mse + mean_weight * mean_term + variance_weight * variance_term
    return _masked_token_mean(per_token, padding_mask)


def attention_transfer_loss(student, teacher, padding_mask):
    """KL(teacher || student) between attention distributions [batch, heads,
    seq, seq], averaged over heads and real query tokens."""
    student = ops.cast(student, "float32")
    teacher = ops.cast(teacher, "float32")
    kl = ops.sum(
        teacher * (ops.log(teacher + _LOG_EPSILON) - ops.log(student + _LOG_EPSILON)),
        axis=-1,
    )
    return _masked_token_mean(ops.mean(kl, axis=1), padding_mask)


def soft_mlm_loss(student_logits, teacher_logits, weights, temperature=1.0):
    """KL(teacher || student) of the masked-LM predictions at `temperature`
    (times temperature^2, Hinton's scaling), averaged over real predictions
    (`weights` [batch, predictions], 0 on padded slots).

    The KL differs from cross-entropy against the teacher's soft targets
    only by the teacher's entropy (a constant), so the gradients are the
    same, and it is zero when the student matches.
    """
    kl = tempered_kl(student_logits, teacher_logits, temperature)
    return _masked_token_mean(kl, weights) * (temperature**2)


def tempered_kl(student_logits, teacher_logits, temperature=1.0):
    """KL(teacher || student) of softmax(logits / temperature) over the last
    axis, one value per row (not scaled by temperature^2)."""
    student_log = ops.log_softmax(ops.cast(student_logits, "float32") / temperature, axis=-1)
    teacher_log = ops.log_softmax(ops.cast(teacher_logits, "float32") / temperature, axis=-1)
    return ops.sum(ops.exp(teacher_log) * (teacher_log - student_log), axis=-1)


def hard_mlm_loss(student_logits, labels, weights):
    """Cross-entropy against the true masked tokens, over real predictions."""
    log_probabilities = ops.log_softmax(ops.cast(student_logits, "float32"), axis=-1)
    picked = ops.take_along_axis(
        log_probabilities, ops.cast(labels, "int32")[..., None], axis=-1
    )[..., 0]
    return _masked_token_mean(-picked, weights)
