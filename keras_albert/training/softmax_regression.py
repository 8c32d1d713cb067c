"""An L2-regularised softmax regression fitted by full-batch Adam, in NumPy.

The fine-tuning recipe's head warm start (`warm_start_head`) fits one on
the frozen model's features for each of three regularisation strengths.
It was a Keras `Dense` fitted for 300 full-batch steps: the same loss and
the same Adam updates, but Keras's per-step overhead and one traced train
function per fit made the three fits take 9.4 s for 216 glosses on this
CPU (beside other jobs), against 0.28 s here. scikit-learn's
`LogisticRegression` solves it too, but is no dependency of the package.
"""

import numpy as np

# keras.optimizers.Adam's defaults, which the Keras head used.
BETA_1 = 0.9
BETA_2 = 0.999
EPSILON = 1e-7


def glorot_uniform(fan_in, fan_out, seed):
    """A [fan_in, fan_out] kernel drawn as Keras's `glorot_uniform` draws
    it (the distribution, not its random stream)."""
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return np.random.default_rng(seed).uniform(-limit, limit, (fan_in, fan_out))


def loss_and_gradients(features, labels, kernel, bias, l2):
    """Mean cross-entropy of softmax(features @ kernel + bias) against the
    class ids `labels`, plus `l2` times the kernel's sum of squares (a
    Keras `L2(l2)` kernel regulariser); and its gradients."""
    logits = features @ kernel + bias
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    rows = np.arange(len(labels))
    loss = -np.log(probabilities[rows, labels]).mean() + l2 * np.square(kernel).sum()
    probabilities[rows, labels] -= 1.0
    probabilities /= len(labels)
    return loss, features.T @ probabilities + 2.0 * l2 * kernel, probabilities.sum(axis=0)


def fit_softmax_regression(features, labels, num_classes, l2, steps, learning_rate, seed=0):
    """(kernel, bias) after `steps` full-batch Adam steps from a Glorot
    kernel and a zero bias, as a Keras `Dense(num_classes,
    kernel_regularizer=L2(l2))` fitted with `Adam(learning_rate)` on one
    batch holding every example."""
    features = np.asarray(features, "float64")
    labels = np.asarray(labels).astype("int64")
    if features.ndim != 2 or len(features) != len(labels) or not len(labels):
        raise ValueError(
            "`features` must be [examples, features] with one label per example. "
            f"Received: features of shape {features.shape} and {len(labels)} labels."
        )
    if labels.min() < 0 or labels.max() >= num_classes:
        raise ValueError(
            f"`labels` must be class ids in [0, {num_classes}). "
            f"Received: ids from {labels.min()} to {labels.max()}."
        )
    parameters = [glorot_uniform(features.shape[1], num_classes, seed), np.zeros(num_classes)]
    moments = [np.zeros_like(p) for p in parameters]
    second_moments = [np.zeros_like(p) for p in parameters]
    for step in range(1, steps + 1):
        _, *gradients = loss_and_gradients(features, labels, *parameters, l2)
        # Keras's Adam, as `keras.optimizers.Adam.update_step` writes it.
        alpha = learning_rate * np.sqrt(1 - BETA_2**step) / (1 - BETA_1**step)
        for parameter, gradient, m, v in zip(parameters, gradients, moments, second_moments):
            m += (gradient - m) * (1 - BETA_1)
            v += (np.square(gradient) - v) * (1 - BETA_2)
            parameter -= alpha * m / (np.sqrt(v) + EPSILON)
    return tuple(parameters)
