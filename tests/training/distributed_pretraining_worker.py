"""Trains a tiny AlbertPretrainer under a strategy; run as a subprocess.

Usage: python distributed_pretraining_worker.py STRATEGY OUTPUT_JSON
`mirrored` splits the CPU into two logical devices first; `multi_worker`
reads TF_CONFIG. Writes the final loss, step and a weight checksum.
"""

import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def _features(count=64, length=16, predictions=3, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "input_ids": rng.integers(5, 60, (count, length)).astype("int32"),
        "input_mask": np.ones((count, length), "int32"),
        "segment_ids": np.repeat([[0] * 8 + [1] * 8], count, 0).astype("int32"),
        "masked_lm_positions": rng.integers(1, length, (count, predictions)).astype("int32"),
        "masked_lm_ids": rng.integers(5, 60, (count, predictions)).astype("int32"),
        "masked_lm_weights": np.ones((count, predictions), "float32"),
        "next_sentence_labels": rng.integers(0, 2, (count, 1)).astype("int32"),
    }


def main(strategy_name, output):
    if strategy_name == "mirrored":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2
        )
    from keras_albert.models.albert_backbone import AlbertBackbone
    from keras_albert.models.albert_pretrainer import AlbertPretrainer
    from keras_albert.models.albert_pretrainer import pretraining_batch
    from keras_albert.training.resumable_fit import resumable_fit
    from keras_albert.training.strategy import resolve_strategy
    from keras_albert.training.strategy import xla_supported

    strategy = resolve_strategy(strategy_name)
    if os.environ.get("UNPATCHED_KERAS"):
        from keras_albert.training import keras_distribution_fixes

        keras_distribution_fixes.remove_keras_distribution_fixes()
        resumable_fit.__globals__["apply_keras_distribution_fixes"] = lambda: None
    keras.utils.set_random_seed(0)
    with strategy.scope():
        backbone = AlbertBackbone(
            vocabulary_size=60, num_layers=2, num_heads=2, embedding_dim=8,
            hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
        )
        pretrainer = AlbertPretrainer(backbone)
        pretrainer.compile(
            optimizer=keras.optimizers.Adam(1e-2),
            jit_compile=xla_supported(strategy),
        )

    def stream(skip_batches):
        return (
            tf.data.Dataset.from_tensor_slices(_features())
            .repeat()
            .batch(8, drop_remainder=True)
            .skip(skip_batches)
            .map(pretraining_batch)
        )

    history, _ = resumable_fit(
        pretrainer, stream, total_steps=6, checkpoint_every=3,
        checkpoint_dir=output + ".checkpoints", verbose=0,
    )
    result = {
        "replicas": strategy.num_replicas_in_sync,
        "jit_compile": bool(pretrainer.jit_compile),
        "steps": int(pretrainer.optimizer.iterations.numpy()),
        "losses": [float(v) for v in history.history["loss"]],
        "checksum": float(sum(np.abs(w.numpy()).sum() for w in pretrainer.weights)),
    }
    with open(output, "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
