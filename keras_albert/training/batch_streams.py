"""`fit` and `evaluate` for streams of packed batches, on every backend.

Off TensorFlow the training streams are Python generators or Keras
`PyDataset`s of batches the pipeline packed already. keras-hub's
`PipelineModel.fit`/`evaluate` turn their input into a grain or tf.data
dataset and cannot take those; with nothing left to preprocess, Keras's own
`fit`/`evaluate` run the same step. On TensorFlow the streams are tf.data
datasets and the model's own methods take them.
"""

import functools

import keras


def stream_fit(model):
    """The `fit` that takes `model`'s packed-batch streams."""
    if keras.config.backend() == "tensorflow":
        return model.fit
    return functools.partial(keras.Model.fit, model)


def stream_evaluate(model):
    """The `evaluate` that takes `model`'s packed-batch streams."""
    if keras.config.backend() == "tensorflow":
        return model.evaluate
    return functools.partial(keras.Model.evaluate, model)
