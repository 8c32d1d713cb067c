"""Keeps the best epoch's weights, with ties going to the later epoch.

Keras's `EarlyStopping(restore_best_weights=True)` keeps the first of
equally scored epochs (a strict `>`): when a small validation split scored
1.0 after the warm-started head and after every epoch, fine-tuning threw
away all it trained. Here an epoch that equals the best replaces it (it
trained longer on the same score), while patience still counts epochs
since the last strict improvement, so a flat score stops a run as before.
"""

import keras


class KeepBestEpoch(keras.callbacks.EarlyStopping):
    """`EarlyStopping` that keeps the latest of the best-scoring epochs.

    Args:
        monitor: the log to maximise (`"val_accuracy"`, ...).
        patience: stop after this many epochs without a strictly better
            score; None trains every epoch (the best is still kept).
        epoch_zero: logs of the model as it is before `fit` (a fitted head
            on a frozen backbone): a candidate, numbered epoch 0.
        description: how messages name the score ("validation accuracy").

    After `fit`, the model holds the kept epoch's weights (kept in memory,
    as Keras does, never in a file) and `kept_epoch` is its number: 0 for
    the model before training, k for the k-th epoch of this `fit`.
    """

    def __init__(self, monitor, patience=None, epoch_zero=None, description=None):
        super().__init__(monitor=monitor, mode="max", patience=patience or 0, restore_best_weights=True)
        self.stop_after = patience
        self.epoch_zero = epoch_zero
        self.description = description or monitor
        self.kept_epoch = None

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self.kept_epoch, self.best_strict_epoch = None, None
        if self.epoch_zero is not None and self.epoch_zero.get(self.monitor) is not None:
            self.best = float(self.epoch_zero[self.monitor])
            self.best_weights = self.model.get_weights()
            self.kept_epoch = self.best_strict_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = self.get_monitor_value(logs)
        if current is None:
            return
        number, current = epoch + 1, float(current)
        if self.best is None or current > self.best:
            self.best_strict_epoch = number
        if self.best is None or current >= self.best:
            self.best, self.kept_epoch, self.best_epoch = current, number, epoch
            self.best_weights = self.model.get_weights()
        if self.stop_after and number - self.best_strict_epoch >= self.stop_after:
            print(f"No better {self.description} for {self.stop_after} epochs: stopping after epoch {number}",
                  flush=True)
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.best_weights is not None:
            self.model.set_weights(self.best_weights)
        # Weights can be large (a copy of the model): not kept past `fit`.
        self.best_weights = None
