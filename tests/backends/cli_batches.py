"""Runs `cli_batch_worker.py` (several CLI command lines in one process,
TensorFlow unimportable) from a test, on a backend other than this one."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("cli_batch_worker.py")


def run_batch(jobs, directory, backend="jax", **env):
    """(the process's CompletedProcess, the jobs' results in order); a job
    that killed the process has no result. `env`: more environment."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    jobs_path, results_path = directory / "jobs.json", directory / "results.json"
    jobs_path.write_text(json.dumps(jobs))
    process = subprocess.run(
        [sys.executable, str(WORKER), str(jobs_path), str(results_path)],
        env=dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=str(ROOT), **env),
        capture_output=True, text=True, timeout=1800,
    )
    results = json.loads(results_path.read_text()) if results_path.exists() else []
    return process, results
