"""`model.fit` that resumes exactly where a killed run stopped.

Keras's `BackupAndRestore` restores weights and the optimizer step but
replays the interrupted epoch's data from its first batch, so a resumed run
sees different batches than an uninterrupted one. Here the data position
is part of the state: the dataset is a deterministic stream (seeded), and a
resumed run rebuilds it with the batches already trained on skipped. With
the weights, the optimizer slots, the step and the dropout seed state
restored (a `tf.train.Checkpoint` on TensorFlow, NumPy files from
`array_checkpoints` on JAX and PyTorch), the final weights equal those of
an uninterrupted run.
"""

import math
import os

import keras

from keras_albert.training.array_checkpoints import ArrayCheckpoints
from keras_albert.training.array_checkpoints import SaveArrayCheckpoint
from keras_albert.training.array_checkpoints import seed_generator_states
from keras_albert.training.batch_streams import stream_fit
from keras_albert.training.interval_progress import IntervalProgress
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


def training_checkpoint(model):
    """A `tf.train.Checkpoint` of everything a resumed run needs.

    Model weights, optimizer slots and step, and the dropout RNG states.
    """
    if getattr(model, "optimizer", None) is None:
        raise ValueError(
            f"Compile the model before checkpointing it: {model.name!r} has "
            "no optimizer."
        )
    import tensorflow as tf  # the TensorFlow backend's checkpoints

    if not model.optimizer.built:
        # Slots must live where the model's variables live (its strategy).
        with model.distribute_strategy.scope():
            model.optimizer.build(model.trainable_variables)
    return tf.train.Checkpoint(
        weights=list(model.weights),
        optimizer=list(model.optimizer.variables),
        seeds=seed_generator_states(model),
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
            distributed dataset; on JAX and PyTorch, a generator such as
            `PretrainingBatches(...).generator()`) returning the training stream with the
            first `skip_batches` batches left out; the stream must be
            deterministic (seeded) for the resume to be exact.
        total_steps: int, optimizer steps to reach.
        checkpoint_dir: str, where checkpoints go (kept: `max_to_keep`).
        checkpoint_every: int, steps between checkpoints; must divide
            `total_steps`. Each checkpoint interval is one Keras epoch.
        callbacks: more Keras callbacks (TensorBoard, progress, ...);
            without a `ProgbarLogger` among them, `IntervalProgress` heads
            each interval with its steps and the run's time left.
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
    if keras.config.backend() == "tensorflow":
        saver = _tensorflow_checkpoints(model, checkpoint_dir, max_to_keep)
    else:
        checkpoints = ArrayCheckpoints(model, checkpoint_dir, max_to_keep)
        checkpoints.restore_latest()
        saver = SaveArrayCheckpoint(checkpoints)
    first_step = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
    if first_step % checkpoint_every:
        # Any interval dividing both the checkpoint's step and the run's
        # length resumes it; the largest such is their gcd.
        raise ValueError(
            f"The checkpoint in {os.fspath(checkpoint_dir)!r} is at step "
            f"{first_step}, which `checkpoint_every={checkpoint_every}` "
            "does not divide; resume with the `checkpoint_every` "
            "(`--checkpoint_every`) it was written with, or one that divides "
            f"both {first_step} and total_steps={total_steps}, such as "
            f"{math.gcd(first_step, total_steps)}."
        )
    if first_step >= total_steps:
        return None, first_step
    if not any(isinstance(callback, keras.callbacks.ProgbarLogger) for callback in callbacks):
        # Keras's "Epoch 3/10" would count checkpoint intervals.
        callbacks = [*callbacks, IntervalProgress(total_steps, checkpoint_every)]
    history = stream_fit(model)(
        make_dataset(first_step),
        initial_epoch=first_step // checkpoint_every,
        epochs=total_steps // checkpoint_every,
        steps_per_epoch=checkpoint_every,
        callbacks=[*callbacks, saver],
        verbose=verbose,
        validation_data=validation_data,
        # A dataset shuffles itself; Keras' default True only warns.
        shuffle=False,
    )
    return history, first_step


def _tensorflow_checkpoints(model, checkpoint_dir, max_to_keep):
    """Restores the latest `tf.train.Checkpoint`; returns the saver."""
    import tensorflow as tf

    apply_keras_distribution_fixes()
    checkpoint = training_checkpoint(model)
    manager = tf.train.CheckpointManager(
        checkpoint, os.fspath(checkpoint_dir), max_to_keep=max_to_keep
    )
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
    return _CheckpointEveryEpoch(manager)


def apply_keras_distribution_fixes():
    """Multi-worker `fit` fails without them (keras-team/keras#20585); the
    fixes patch Keras's TensorFlow trainer, so they import TensorFlow."""
    from keras_albert.training import keras_distribution_fixes

    keras_distribution_fixes.apply_keras_distribution_fixes()
