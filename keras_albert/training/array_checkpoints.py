"""Training checkpoints as NumPy files, for the JAX and PyTorch backends.

`tf.train.Checkpoint` needs TensorFlow; this keeps the same state (every
model variable, the optimizer's slots and step, the dropout seed states;
on PyTorch also torch's own random state, which Keras's dropout draws from
when a layer was given no seed) as one `.npz` per checkpoint, `step-000001000.npz`, written atomically
(`write_file_atomically`), so a kill mid-save leaves the previous
checkpoint the latest.
"""

import os
import pathlib
import re

import keras
import numpy as np

from keras_albert.utils.atomic_file import write_file_atomically

_NAME = re.compile(r"^step-(\d{9})\.npz$")


def seed_generator_states(model):
    """The state variables of every dropout seed generator in `model`."""
    states = []
    for layer in model._flatten_layers(include_self=True):
        generator = getattr(layer, "seed_generator", None)
        if generator is not None and hasattr(generator, "state"):
            states.append(generator.state)
    return states


def _torch_random_states():
    """{name: uint8 array}: torch's global generator (and each CUDA
    device's), which Keras's unseeded dropout uses on PyTorch."""
    if keras.config.backend() != "torch":
        return {}
    import torch

    states = {"torch_rng_cpu": torch.get_rng_state().numpy()}
    if torch.cuda.is_available():
        for index, state in enumerate(torch.cuda.get_rng_state_all()):
            states[f"torch_rng_cuda{index}"] = state.numpy()
    return states


def _set_torch_random_states(states):
    import torch

    torch.set_rng_state(torch.from_numpy(states["torch_rng_cpu"]))
    cuda = [states[name] for name in sorted(states) if name.startswith("torch_rng_cuda")]
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([torch.from_numpy(state) for state in cuda])


def training_variables(model):
    """Everything a resumed run needs: weights, optimizer, seed states."""
    if getattr(model, "optimizer", None) is None:
        raise ValueError(
            f"Compile the model before checkpointing it: {model.name!r} has "
            "no optimizer."
        )
    if not model.optimizer.built:
        model.optimizer.build(model.trainable_variables)
    return list(model.weights) + list(model.optimizer.variables) + seed_generator_states(model)


class ArrayCheckpoints:
    """Saves and restores `training_variables(model)` in `directory`."""

    def __init__(self, model, directory, max_to_keep=3):
        self.model = model
        self.directory = pathlib.Path(directory)
        self.max_to_keep = max_to_keep
        self.variables = training_variables(model)
        # torch's random state of the restored checkpoint, set when training
        # starts (`SaveArrayCheckpoint`): starting `fit` draws from it (its
        # data loader's seed), as the interrupted run drew once, not twice.
        self.pending_torch_random = None

    def steps(self):
        """Steps of the complete checkpoints, oldest first."""
        if not self.directory.is_dir():
            return []
        found = (_NAME.match(path.name) for path in self.directory.iterdir())
        return sorted(int(match.group(1)) for match in found if match)

    def path(self, step):
        return self.directory / f"step-{step:09d}.npz"

    def save(self, step):
        self.directory.mkdir(parents=True, exist_ok=True)
        values = {
            f"v{index}": keras.ops.convert_to_numpy(variable.value)
            for index, variable in enumerate(self.variables)
        }
        values.update(_torch_random_states())
        write_file_atomically(self.path(step), lambda file: np.savez(file, **values), name="checkpoint")
        for old in self.steps()[:-self.max_to_keep]:
            self.path(old).unlink(missing_ok=True)

    def restore_latest(self):
        """Restores the latest checkpoint; returns its step (0: none)."""
        steps = self.steps()
        if not steps:
            return 0
        path = self.path(steps[-1])
        with np.load(path, allow_pickle=False) as data:
            count = sum(name.startswith("v") for name in data.files)
            if count != len(self.variables):
                raise ValueError(
                    f"The checkpoint {os.fspath(path)!r} holds {count} "
                    f"variables; this model and optimizer have {len(self.variables)}. "
                    "Resume with the settings it was written with."
                )
            for index, variable in enumerate(self.variables):
                value = data[f"v{index}"]
                if tuple(value.shape) != tuple(variable.shape):
                    raise ValueError(
                        f"The checkpoint {os.fspath(path)!r} does not match this "
                        f"model: {variable.path} has shape {tuple(variable.shape)}, "
                        f"the checkpoint {tuple(value.shape)}."
                    )
                variable.assign(value)
            if keras.config.backend() == "torch" and "torch_rng_cpu" in data.files:
                self.pending_torch_random = {
                    name: np.array(data[name]) for name in data.files if name.startswith("torch_rng_")}
        return steps[-1]

    def set_pending_random_state(self):
        """Sets the restored torch random state, once (see `__init__`)."""
        if self.pending_torch_random is not None:
            _set_torch_random_states(self.pending_torch_random)
            self.pending_torch_random = None


class SaveArrayCheckpoint(keras.callbacks.Callback):
    """Saves a checkpoint at the end of each (checkpoint-sized) epoch."""

    def __init__(self, checkpoints):
        super().__init__()
        self.checkpoints = checkpoints

    def on_train_batch_begin(self, batch, logs=None):
        self.checkpoints.set_pending_random_state()

    def on_epoch_end(self, epoch, logs=None):
        step = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))
        self.checkpoints.save(step)
