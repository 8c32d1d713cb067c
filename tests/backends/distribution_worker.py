"""One pretraining step under keras.distribution on 8 virtual CPU devices
(JAX), beside the same step on one device; writes losses, weights after
the step and how the shared query kernel was laid out.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 KERAS_BACKEND=jax \
        python tests/backends/distribution_worker.py WEIGHTS.h5 OUT.npz
"""

import json
import sys

import keras
import numpy as np

import keras_albert
from keras_albert.training.distribution import albert_data_parallel
from keras_albert.training.distribution import albert_model_parallel
from keras_albert.training.lamb import AlbertLamb

CONFIG = dict(
    vocabulary_size=128, num_layers=3, num_heads=4, embedding_dim=16,
    hidden_dim=32, intermediate_dim=64, max_sequence_length=32,
)


def batch(size=8, length=16):
    rng = np.random.default_rng(0)
    mask = np.ones((size, length), "int32")
    mask[::2, 10:] = 0
    x = {
        "token_ids": rng.integers(5, 128, (size, length)).astype("int32"),
        "segment_ids": (np.arange(length) >= 6).astype("int32")[None].repeat(size, 0),
        "padding_mask": mask,
        "mask_positions": np.tile(np.array([1, 3, 7, 0], "int32"), (size, 1)),
    }
    y = {"mlm": rng.integers(5, 128, (size, 4)).astype("int32"), "sentence_order": np.arange(size) % 2}
    weights = {"mlm": np.tile(np.array([1, 1, 1, 0], "float32"), (size, 1)), "sentence_order": np.ones(size, "float32")}
    return x, y, weights


def step(weights_path, distribution):
    keras.distribution.set_distribution(distribution)
    try:
        model = keras_albert.AlbertPretrainer(keras_albert.AlbertBackbone(**CONFIG))
        model.load_weights(weights_path)
        model.compile(optimizer=AlbertLamb(0.01))
        x, y, weights = batch()
        loss = keras.Model.train_on_batch(model, x, y, sample_weight=weights, return_dict=True)["loss"]
        query = next(v for v in model.variables if v.path.endswith("query/kernel"))
        sharding = query.value.sharding
        layout = [str(axis) for axis in getattr(sharding, "spec", ())]
        return float(loss), [keras.ops.convert_to_numpy(v) for v in model.trainable_variables], layout
    finally:
        keras.distribution.set_distribution(None)


def main(weights_path, out_path):
    results = {}
    report = {"devices": len(keras.distribution.list_devices())}
    runs = {
        "single": None,
        "data_parallel": albert_data_parallel(),
        "model_parallel": albert_model_parallel(model_parallel=4),
    }
    for name, distribution in runs.items():
        loss, variables, layout = step(weights_path, distribution)
        report[f"{name}_loss"] = loss
        report[f"{name}_query_layout"] = layout
        for index, value in enumerate(variables):
            results[f"{name}/{index}"] = value
    try:
        keras.distribution.set_distribution(None)
        albert_model_parallel(model_parallel=3)
    except ValueError as error:
        report["bad_model_parallel"] = str(error)
    results["report"] = np.array(json.dumps(report))
    np.savez(out_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
