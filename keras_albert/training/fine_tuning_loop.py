"""The one loop that fine-tunes a task model and keeps its best epoch.

`finetune` (`pipelines/finetuning.py`), the classifier recipe
(`pipelines/classifier_fine_tuning.py`: `make demo`, benchmarks/transfer.py,
examples/quickstart.py) and task distillation (`distill/task_distillation.py`)
all train through `fit_keeping_best`: one Keras `fit` over every epoch with
Keras callbacks around it:

- Keras's progress bar first, so its line holds the training loss only,
  each epoch headed by what the bar counts and the run's time left
  (`EpochProgress`: "Epoch 2/8: one pass over the training data, the bar
  counts batches; run 12 % done, about 3 min left");
- `EpochScores`: the task's own metrics on each named split (validation,
  evaluation), printed with the split's name and added to the logs;
- `KeepBestEpoch`: the latest of the best-scoring epochs on `monitor`
  (ties go to the later epoch), a warm-started model as epoch 0, patience;
  with no `monitor` the last epoch is kept;
- `EpochTensorBoard` (with `tensorboard_dir`): every score, epoch 0 included.

Optimizers come from `training/optimizers.py`, which every loop shares.
"""

import dataclasses

from keras_albert.training.best_epoch import KeepBestEpoch
from keras_albert.training.epoch_logging import EpochTensorBoard
from keras_albert.training.epoch_progress import EpochProgress
from keras_albert.utils.backend import tensorflow_available


@dataclasses.dataclass
class FitOutcome:
    """What `fit_keeping_best` returns.

    Attributes:
        history: what `fit` returned (a Keras `History`).
        kept_epoch: the epoch whose weights the model holds: 0 for the model
            before training (`epoch_zero`), k for the k-th epoch; None when
            `fit` ran no epoch.
        epochs_run: epochs trained (fewer than asked when patience stopped).
    """

    history: object
    kept_epoch: int
    epochs_run: int


def tensorboard_callback(log_dir, epoch_zero=None):
    """`EpochTensorBoard` writing under `log_dir`, or None (with a note)
    where TensorFlow's summary writer is not installed."""
    if not tensorflow_available():
        print("TensorBoard logs: not written (TensorFlow's summary writer is not installed)", flush=True)
        return None
    return EpochTensorBoard(log_dir, epoch_zero=epoch_zero)


def fit_keeping_best(model, epochs, *, fit=None, monitor=None, patience=None, epoch_zero=None,
                     scores=None, tensorboard_dir=None, callbacks=(), verbose="auto",
                     monitor_description=None, **fit_arguments):
    """Trains `model` for `epochs` epochs; it ends holding the kept epoch.

    Args:
        model: a compiled Keras model.
        epochs: int, epochs to train.
        fit: the `fit` to call (default `model.fit`; the packed-batch
            streams use `training.batch_streams.stream_fit(model)`).
        monitor: the log (`"val_accuracy"`, ...) whose highest value picks
            the epoch kept, ties to the later epoch; None keeps the last.
        patience: with `monitor`, stop after this many epochs without a
            strictly better score; None trains every epoch.
        epoch_zero: logs of `model` before training (a warm-started head),
            scored like an epoch: kept if no epoch beats it, and written to
            TensorBoard as step 0.
        scores: an `EpochScores` callback (the task's metrics per split).
        tensorboard_dir: where TensorBoard logs go; None writes none.
        callbacks: more Keras callbacks, run after the scores are in the logs.
        verbose: Keras `fit` verbosity.
        monitor_description: how messages name `monitor`.
        **fit_arguments: passed to `fit` (`x`, `y`, `batch_size`,
            `validation_data`, ...).

    Returns:
        A `FitOutcome`.
    """
    fit = fit or model.fit
    # The progress bar first: its epoch line is the training loss alone; the
    # scores follow on their own line, each named with its split.
    run_callbacks = [EpochProgress()]
    if scores is not None:
        run_callbacks.append(scores)
    keeper = None
    if monitor is not None:
        keeper = KeepBestEpoch(monitor, patience=patience, epoch_zero=epoch_zero,
                               description=monitor_description)
        run_callbacks.append(keeper)
    if tensorboard_dir is not None:
        board = tensorboard_callback(tensorboard_dir, epoch_zero=epoch_zero)
        if board is not None:
            run_callbacks.append(board)
    run_callbacks += list(callbacks)
    history = fit(epochs=epochs, callbacks=run_callbacks, verbose=verbose, **fit_arguments)
    logged = getattr(history, "history", None) or {}
    epochs_run = len(next(iter(logged.values()), []))
    kept = keeper.kept_epoch if keeper is not None else (epochs_run or None)
    return FitOutcome(history=history, kept_epoch=kept, epochs_run=epochs_run)
