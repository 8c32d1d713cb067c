"""keras.distribution on JAX (8 virtual CPU devices): data parallel and
ALBERT's model-parallel layout give the single-device step."""

import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_albert
from tests.backends.distribution_worker import CONFIG

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stepped(tmp_path_factory):
    directory = tmp_path_factory.mktemp("distribution")
    keras.utils.set_random_seed(0)
    model = keras_albert.AlbertPretrainer(keras_albert.AlbertBackbone(**CONFIG))
    model.save_weights(directory / "start.weights.h5")
    env = dict(
        os.environ, KERAS_BACKEND="jax",
        XLA_FLAGS="--xla_force_host_platform_device_count=8",
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    out = directory / "out.npz"
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "backends" / "distribution_worker.py"),
         str(directory / "start.weights.h5"), str(out)],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    data = dict(np.load(out))
    return json.loads(str(data.pop("report"))), data


@pytest.mark.parametrize("name", ["data_parallel", "model_parallel"])
def test_step_equals_single_device(stepped, name):
    report, weights = stepped
    assert report["devices"] == 8
    assert report[f"{name}_loss"] == pytest.approx(report["single_loss"], abs=1e-5)
    single = sorted(k for k in weights if k.startswith("single/"))
    assert len(single) > 10
    for key in single:
        np.testing.assert_allclose(weights[key.replace("single", name)], weights[key], atol=1e-5, err_msg=key)


def test_model_parallel_splits_the_shared_query_kernel(stepped):
    report, _ = stepped
    assert report["model_parallel_query_layout"] == ["None", "model"]
    assert "model" not in report["data_parallel_query_layout"]


def test_model_parallel_must_divide_the_devices(stepped):
    report, _ = stepped
    assert report["bad_model_parallel"] == (
        "`model_parallel` must divide the number of devices (8). Received: model_parallel=3"
    )


def test_refused_off_jax():
    from keras_albert.training.distribution import albert_data_parallel

    with pytest.raises(ValueError, match="KERAS_BACKEND=jax only; this process runs KERAS_BACKEND=tensorflow"):
        albert_data_parallel()
