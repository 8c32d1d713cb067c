"""`keras.layers.TFSMLayer` that can be fine-tuned.

Keras 3.15's TFSMLayer keeps SavedModel variable names such as
`embeddings:0`; an optimizer then names its slots `embeddings:0_momentum`,
which is not a valid scope name, and `fit` fails. This subclass drops the
`:` (and `/`) from the names, so a serving SavedModel exported here
(raw strings in) can be loaded into a Keras 3 model and trained further.
"""

import keras
from keras.src import backend


@keras.saving.register_keras_serializable(package="keras_albert")
class FineTunableTFSMLayer(keras.layers.TFSMLayer):
    """Example:
    >>> layer = FineTunableTFSMLayer("serving", call_endpoint="serving_default",
    ...                              trainable=True)  # doctest: +SKIP
    >>> texts = keras.Input(shape=(), dtype="string")  # doctest: +SKIP
    >>> model = keras.Model(texts, layer(texts)["logits"])  # doctest: +SKIP
    """

    def _add_existing_weight(self, weight):
        variable = backend.Variable(
            initializer=weight,
            trainable=weight.trainable,
            dtype=weight.dtype,
            shape=weight.shape,
            name=weight.name.replace("/", "_").replace(":", "_"),
        )
        self._track_variable(variable)
