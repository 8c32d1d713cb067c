"""Folding the choices of a multiple-choice batch into the batch axis.

A multiple-choice batch is [batch, num_choices, sequence]; the encoder runs
on [batch * num_choices, sequence] and the per-choice scores fold back to
[batch, num_choices]. `num_choices` may differ from batch to batch.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_albert")
class FlattenChoices(keras.layers.Layer):
    """{name: [batch, choices, sequence]} -> {name: [batch * choices, sequence]}."""

    def call(self, inputs):
        return {
            name: ops.reshape(value, (-1, ops.shape(value)[-1]))
            for name, value in inputs.items()
        }

    def compute_output_shape(self, input_shape):
        return {name: (None, shape[-1]) for name, shape in input_shape.items()}


@keras.saving.register_keras_serializable(package="keras_albert")
class ChoiceScores(keras.layers.Layer):
    """[batch * choices, 1] scores -> [batch, choices], choices read off `reference`."""

    def call(self, scores, reference):
        return ops.reshape(scores, (-1, ops.shape(reference)[1]))

    def compute_output_shape(self, scores_shape, reference_shape):
        return (reference_shape[0], reference_shape[1])
