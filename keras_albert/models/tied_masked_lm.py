"""The masked-LM pieces `AlbertMaskedLM` and `AlbertPretrainer` share.

Both put Google's `cls/predictions` head, tied to the word embeddings, on
the backbone; a masked LM made from a pretrainer's preset takes that head's
trained weights straight from the pretrainer's `task.weights.h5`.
"""

import os
import tempfile

import h5py
import keras

from keras_albert.layers.heads import AlbertMaskedLMHead


def tied_masked_lm_head(backbone):
    """Google's `cls/predictions` head, tied to `backbone`'s word embeddings."""
    return AlbertMaskedLMHead(
        token_embedding=backbone.token_embedding,
        activation=backbone.activation,
        layer_norm_epsilon=backbone.layer_norm_epsilon,
        initializer_range=backbone.initializer_range,
        dtype=backbone.dtype_policy,
        name="masked_lm_head",
    )


def masked_lm_inputs(backbone):
    """The backbone's inputs plus `mask_positions` [batch, predictions]."""
    return {
        **backbone.input,
        "mask_positions": keras.Input(shape=(None,), dtype="int32", name="mask_positions"),
    }


def load_masked_lm_head_weights(model, task_weights_path):
    """Loads `model`'s head from another task's `task.weights.h5`.

    `model` is a task whose only weights outside its backbone are its
    masked-LM head (an `AlbertMaskedLM`). Keras stores a layer under its
    class's name, so the head sits at the same paths in a pretrainer's
    file: every array `model` would save is read from `task_weights_path`
    at its own path (the sentence heads there are not read), written to a
    scratch file with `model`'s layout and loaded by Keras. Raises
    ValueError, loading nothing, if an array is missing or shaped otherwise.
    """
    # The head only: not the backbone, nor a compiled model's optimizer.
    skip = list(model.backbone._flatten_layers())
    if getattr(model, "optimizer", None) is not None:
        skip.append(model.optimizer)
    with tempfile.TemporaryDirectory(prefix="keras_albert_head_") as scratch:
        staged = os.path.join(scratch, "head.weights.h5")
        keras.saving.save_weights(model, staged, objects_to_skip=skip)
        problems = []
        with h5py.File(task_weights_path, "r") as saved, h5py.File(staged, "r+") as mine:

            def copy(name, array):
                if not isinstance(array, h5py.Dataset):
                    return
                source = saved.get(name)
                if not isinstance(source, h5py.Dataset) or source.shape != array.shape:
                    found = getattr(source, "shape", None)
                    problems.append(f"{name} (model {array.shape}, file {found})")
                else:
                    array[...] = source[()]

            mine.visititems(copy)
        if problems:
            raise ValueError(
                f"Cannot take the masked-LM head from {str(task_weights_path)!r}: "
                f"{', '.join(problems[:3])}. It was saved by another architecture."
            )
        keras.saving.load_weights(model, staged, objects_to_skip=skip)
