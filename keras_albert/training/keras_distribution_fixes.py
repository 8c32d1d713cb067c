"""Two small fixes to Keras 3.15's TensorFlow trainer under tf.distribute.

1. `fit` builds a model created in a strategy scope from a first batch
   pulled from the training data and averaged across replicas
   (`_maybe_symbolic_build`). Under `MultiWorkerMirroredStrategy` that
   average fails on a dict of `PerReplica` values ("Attempt to convert a
   value ({'token_ids': PerReplica...})", keras-team/keras#20585). The fix
   builds from zeros shaped like the dataset's element spec, which also
   saves reading a batch.
2. The multi-worker branch of `reduce_per_replica` averages scalar metric
   values over axis 0 ("Invalid reduction dimension 0 for input with 0
   dimensions"). The fix averages them across replicas (`axis=None`).

`apply_keras_distribution_fixes()` is idempotent; `resolve_strategy` and
`resumable_fit` call it. Remove this module when Keras fixes #20585
(tests/training/test_distributed_pretraining.py fails then to say so).
"""

import tensorflow as tf
from keras.src import tree
from keras.src.backend.tensorflow import trainer as tensorflow_trainer

_ORIGINAL_REDUCE_PER_REPLICA = tensorflow_trainer.reduce_per_replica
_ORIGINAL_SYMBOLIC_BUILD = tensorflow_trainer.TensorFlowTrainer._maybe_symbolic_build


def _zeros_like_spec(spec):
    return tf.zeros([1 if size is None else size for size in spec.shape], spec.dtype)


def _symbolic_build_without_consuming(self, iterator=None, data_batch=None):
    if self._distribute_strategy is None:
        return
    if iterator is not None:
        spec = iterator.data_adapter.get_tf_dataset().element_spec
        data_batch = tree.map_structure(_zeros_like_spec, spec)
    with self.distribute_strategy.scope():
        self._symbolic_build(data_batch=data_batch)


def _reduce_per_replica(values, strategy, reduction):
    if reduction in ("auto", "mean") and (
        tensorflow_trainer._collective_all_reduce_multi_worker(strategy)
    ):
        return tree.map_structure(
            lambda value: strategy.reduce("MEAN", value, axis=None), values
        )
    return _ORIGINAL_REDUCE_PER_REPLICA(values, strategy, reduction)


def apply_keras_distribution_fixes():
    """Patches Keras's TensorFlow trainer in place (idempotent).

    Example:
    >>> apply_keras_distribution_fixes()
    >>> keras_distribution_fixes_applied()
    True
    """
    tensorflow_trainer.reduce_per_replica = _reduce_per_replica
    tensorflow_trainer.TensorFlowTrainer._maybe_symbolic_build = (
        _symbolic_build_without_consuming
    )


def remove_keras_distribution_fixes():
    """Restores Keras's own functions (for tests showing the bug)."""
    tensorflow_trainer.reduce_per_replica = _ORIGINAL_REDUCE_PER_REPLICA
    tensorflow_trainer.TensorFlowTrainer._maybe_symbolic_build = (
        _ORIGINAL_SYMBOLIC_BUILD
    )


def keras_distribution_fixes_applied():
    return tensorflow_trainer.reduce_per_replica is _reduce_per_replica
