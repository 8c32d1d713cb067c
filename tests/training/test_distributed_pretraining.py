"""Pretraining under MirroredStrategy (two logical CPUs) and
MultiWorkerMirroredStrategy (two worker processes on 127.0.0.1)."""

import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

WORKER = pathlib.Path(__file__).with_name("distributed_pretraining_worker.py")
ROOT = WORKER.parents[2]


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.mark.large
def test_mirrored_two_logical_cpus_trains(tmp_path):
    """XLA on CPU cannot run several replicas (see `xla_supported`); the
    step runs as a graph function there."""
    output = str(tmp_path / "mirrored.json")
    subprocess.run(
        [sys.executable, str(WORKER), "mirrored", output],
        env=_env(), check=True, timeout=300, capture_output=True,
    )
    result = json.loads(pathlib.Path(output).read_text())
    assert result["replicas"] == 2
    assert result["jit_compile"] is False
    assert result["steps"] == 6
    assert np.isfinite(result["losses"]).all()


def _run_two_workers(tmp_path, **env):
    ports = _free_ports(2)
    workers = []
    for index in range(2):
        tf_config = {
            "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
            "task": {"type": "worker", "index": index},
        }
        workers.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), "multi_worker", str(tmp_path / f"w{index}.json")],
                env=_env(TF_CONFIG=json.dumps(tf_config), **env),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )
        )
    try:
        logs = [worker.communicate(timeout=300)[0].decode(errors="replace") for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    return [worker.returncode for worker in workers], logs


@pytest.mark.large
def test_multi_worker_two_processes_train_in_lock_step(tmp_path):
    codes, logs = _run_two_workers(tmp_path)
    for code, log in zip(codes, logs):
        assert code == 0, log[-3000:]
    results = [json.loads((tmp_path / f"w{i}.json").read_text()) for i in range(2)]
    assert [r["replicas"] for r in results] == [2, 2]
    # XLA on CPU has no collectives (see `xla_supported`).
    assert [r["jit_compile"] for r in results] == [False, False]
    assert [r["steps"] for r in results] == [6, 6]
    # All-reduced gradients: both workers hold the same weights.
    assert results[0]["checksum"] == results[1]["checksum"]




@pytest.mark.large
def test_unpatched_keras_still_fails_multi_worker(tmp_path):
    """When this fails, Keras fixed #20585: drop keras_distribution_fixes."""
    codes, logs = _run_two_workers(tmp_path, UNPATCHED_KERAS="1")
    assert codes != [0, 0]
    assert any("PerReplica" in log for log in logs)
