"""`model.fit` that resumes exactly where a killed run stopped.

Keras's `BackupAndRestore` restores weights and the optimizer step but
replays the interrupted epoch's data from its first batch, so a resumed run
sees different batches than an uninterrupted one. Here the data position
is part of the state: the dataset is a deterministic stream (seeded), and a
resumed run rebuilds it with the batches already trained on skipped. With
the weights, the optimizer slots, the step and the dropout seed state
restored from a `tf.train.Checkpoint`, the final weights equal those of an
uninterrupted run.
"""

import os

import keras
import tensorflow as tf

from keras_albert.training.keras_distribution_fixes import (
    apply_keras_distribution_fixes,
)
from keras_albert.utils.validation import check_positive_int


class _CheckpointEveryEpoch(keras.callbacks.Callback):
    """Saves a checkpoint at the end of each (checkpoint-sized) epoch."""

    def __init__(self, manager):
        super().__init__()
        self.manager = manager

    def on_epoch_end(self, epoch, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        # TensorFlow writes the data files first and the `checkpoint` index
        # last, so a kill mid-save leaves the previous checkpoint current.
        self.manager.save(checkpoint_number=step)


def _seed_generator_states(model):
    """The state variables of every dropout seed generator in `model`."""
    states = []
    for layer in model._flatten_layers(include_self=True):
        generator = getattr(layer, "seed_generator", None)
        if generator is not None and hasattr(generator, "state"):
            states.append(generator.state)
    return states


def training_checkpoint(model):
    """A `tf.train.Checkpoint` of everything a resumed run needs.

    Model weights, optimizer slots and step, and the dropout RNG states.
    """
    if getattr(model, "optimizer", None) is None:
        raise ValueError(
            f"Compile the model before checkpointing it: {model.name!r} has "
            "no optimizer."
        )
    if not model.optimizer.built:
        # Slots must live where the model's variables live (its strategy).
        with model.distribute_strategy.scope():
            model.optimizer.build(model.trainable_variables)
    return tf.train.Checkpoint(
        weights=list(model.weights),
        optimizer=list(model.optimizer.variables),
        seeds=_seed_generator_states(model),
    )


def resumable_fit(
    model,
    make_dataset,
    total_steps,
    checkpoint_dir,
    checkpoint_every,
    callbacks=(),
    max_to_keep=3,
    verbose="auto",
    validation_data=None,
):
    """Trains `model` for `total_steps`, resuming from `checkpoint_dir`.

    Args:
        model: a compiled Keras model (built inside the strategy scope
            when one is used).
        make_dataset: callable `skip_batches -> tf.data.Dataset` (or a
            distributed dataset) returning the training stream with the
            first `skip_batches` batches left out; the stream must be
            deterministic (seeded) for the resume to be exact.
        total_steps: int, optimizer steps to reach.
        checkpoint_dir: str, where checkpoints go (kept: `max_to_keep`).
        checkpoint_every: int, steps between checkpoints; must divide
            `total_steps`. Each checkpoint interval is one Keras epoch.
        callbacks: more Keras callbacks (TensorBoard, progress, ...).
        verbose: passed to `fit`.
        validation_data: evaluated after every checkpoint interval (the
            `val_*` entries of the epoch logs), e.g. a held-out corpus.

    Returns:
        `(history, first_step)`: the `fit` history (None when training was
        already complete) and the step the run started from.

    Example:
    >>> resumable_fit(pretrainer, lambda skip: make(skip), total_steps=1000,
    ...     checkpoint_dir="run/checkpoints",
    ...     checkpoint_every=100)  # doctest: +SKIP
    """
    check_positive_int("total_steps", total_steps)
    check_positive_int("checkpoint_every", checkpoint_every)
    check_positive_int("max_to_keep", max_to_keep)
    if total_steps % checkpoint_every:
        raise ValueError(
            "`checkpoint_every` must divide `total_steps` (each checkpoint "
            f"closes an epoch). Received: total_steps={total_steps}, "
            f"checkpoint_every={checkpoint_every}"
        )
    # Multi-worker `fit` fails without it (keras-team/keras#20585).
    apply_keras_distribution_fixes()
    checkpoint = training_checkpoint(model)
    manager = tf.train.CheckpointManager(
        checkpoint, os.fspath(checkpoint_dir), max_to_keep=max_to_keep
    )
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
    first_step = int(model.optimizer.iterations.numpy())
    if first_step % checkpoint_every:
        raise ValueError(
            f"The checkpoint in {os.fspath(checkpoint_dir)!r} is at step "
            f"{first_step}, which `checkpoint_every={checkpoint_every}` "
            "does not divide; resume with the `checkpoint_every` it was "
            "written with."
        )
    if first_step >= total_steps:
        return None, first_step
    history = model.fit(
        make_dataset(first_step),
        initial_epoch=first_step // checkpoint_every,
        epochs=total_steps // checkpoint_every,
        steps_per_epoch=checkpoint_every,
        callbacks=[*callbacks, _CheckpointEveryEpoch(manager)],
        verbose=verbose,
        validation_data=validation_data,
        # A dataset shuffles itself; Keras' default True only warns.
        shuffle=False,
    )
    return history, first_step
