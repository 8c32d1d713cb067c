"""Task models that `keras.saving.load_model` compiles as they were saved."""

import keras


class CompileConfigMixin:
    """Compiles a loaded task with the optimizer, losses and metrics it was
    saved with.

    Keras does not call an overridden `compile` when it loads a model (every
    keras-hub task overrides it): it warned, kept the defaults `__init__`
    compiled with, and skipped the saved optimizer state, so `model.save`
    and `load_model` could not resume training.
    """

    def compile_from_config(self, config):
        self.compile(**keras.saving.deserialize_keras_object(config))
        if getattr(self, "optimizer", None) is not None and self.built:
            # Its variables exist before the saved ones are loaded into them.
            self.optimizer.build(self.trainable_variables)
