"""The head warm start's softmax regression: Keras's Adam steps in NumPy,
converging to scikit-learn's logistic regression optimum."""

import keras
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from keras_albert.training.softmax_regression import fit_softmax_regression
from keras_albert.training.softmax_regression import glorot_uniform
from keras_albert.training.softmax_regression import loss_and_gradients


def separable_enough(examples=90, features=6, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.arange(examples) % classes
    centres = rng.normal(0, 1.5, (classes, features))
    return centres[labels] + rng.normal(0, 1, (examples, features)), labels


def test_takes_the_steps_a_keras_dense_with_adam_takes():
    x, y = separable_enough()
    l2, steps, seed = 0.01, 40, 3
    kernel, bias = fit_softmax_regression(x, y, 3, l2=l2, steps=steps, learning_rate=0.05, seed=seed)

    head = keras.Sequential([keras.Input((x.shape[1],)),
                             keras.layers.Dense(3, kernel_regularizer=keras.regularizers.L2(l2))])
    head.layers[-1].set_weights([glorot_uniform(x.shape[1], 3, seed).astype("float32"), np.zeros(3, "float32")])
    head.compile(optimizer=keras.optimizers.Adam(0.05),
                 loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    head.fit(x.astype("float32"), y, batch_size=len(x), epochs=steps, shuffle=False, verbose=0)
    keras_kernel, keras_bias = head.layers[-1].get_weights()
    # float32 in Keras, float64 here.
    np.testing.assert_allclose(kernel, keras_kernel, atol=2e-4)
    np.testing.assert_allclose(bias, keras_bias, atol=2e-4)


@pytest.mark.parametrize("c", [0.01, 1.0])
def test_reaches_the_logistic_regression_optimum(c):
    x, y = separable_enough()
    l2 = 0.5 / (c * len(x))  # scikit-learn's C, per example (as warm_start_head sets it)
    kernel, bias = fit_softmax_regression(x, y, 3, l2=l2, steps=300, learning_rate=0.05)
    reference = LogisticRegression(C=c, tol=1e-10, max_iter=10_000).fit(x, y)
    ours, _, _ = loss_and_gradients(x, y, kernel, bias, l2)
    best, _, _ = loss_and_gradients(x, y, reference.coef_.T, reference.intercept_, l2)
    start, _, _ = loss_and_gradients(x, y, glorot_uniform(6, 3, 0), np.zeros(3), l2)
    assert best <= ours <= best + 1e-3 * (start - best)
    assert (np.argmax(x @ kernel + bias, 1) == reference.predict(x)).mean() >= 0.97


def test_gradients_are_the_losses_slopes():
    x, y = separable_enough(examples=12, features=4)
    rng = np.random.default_rng(1)
    kernel, bias = rng.normal(size=(4, 3)), rng.normal(size=3)
    _, kernel_gradient, bias_gradient = loss_and_gradients(x, y, kernel, bias, 0.3)
    step = 1e-6
    for index in [(0, 0), (3, 2), (1, 1)]:
        moved = kernel.copy()
        moved[index] += step
        slope = (loss_and_gradients(x, y, moved, bias, 0.3)[0] - loss_and_gradients(x, y, kernel, bias, 0.3)[0]) / step
        assert slope == pytest.approx(kernel_gradient[index], abs=1e-4)
    moved = bias.copy()
    moved[2] += step
    slope = (loss_and_gradients(x, y, kernel, moved, 0.3)[0] - loss_and_gradients(x, y, kernel, bias, 0.3)[0]) / step
    assert slope == pytest.approx(bias_gradient[2], abs=1e-4)


@pytest.mark.parametrize("features,labels,match", [
    (np.zeros((3, 2)), [0, 1], "3, 2.* and 2 labels"),
    (np.zeros((2, 2)), [0, 3], r"class ids in \[0, 3\).*from 0 to 3"),
    (np.zeros((0, 2)), [], "0 labels"),
])
def test_bad_input_is_named(features, labels, match):
    with pytest.raises(ValueError, match=match):
        fit_softmax_regression(features, labels, 3, l2=0.1, steps=1, learning_rate=0.1)
