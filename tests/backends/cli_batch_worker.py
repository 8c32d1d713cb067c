"""Several `python -m keras_albert` command lines, in turn, in one process
with TensorFlow unimportable (as on a machine without it): each process
start costs seconds, so the tests batch their runs.

    KERAS_BACKEND=jax python tests/backends/cli_batch_worker.py JOBS.json RESULTS.json

JOBS.json is a list of jobs, each {"argv": [...]} with optionally
  - "kill_at_batch": n: the process SIGKILLs itself after n training
    batches of this job, the way a preempted machine dies (so it is the
    last job of its process);
  - "time_budget_reserve_seconds": s: the budget's reserve, for a test,
    instead of a lent machine's 90 s;
  - "look_at": [paths]: what each path held right after this job (the
    next job may change it): a file's text, "<directory>", or null;
or {"pack": OUT.npz}: the tasks' preprocessors' arrays
(`task_packing_worker.pack`) saved there.
After each job RESULTS.json lists {"returncode", "stdout", "stderr",
"looked_at"} of the jobs done so far.
"""

import contextlib
import io
import json
import pathlib
import sys
import traceback

sys.modules["tensorflow"] = None
sys.modules["tensorflow_text"] = None

import numpy as np  # noqa: E402

from keras_albert.cli.main import main  # noqa: E402
from keras_albert.pipelines import pretraining as pipeline  # noqa: E402
from tests.preemption import killed_after_batches  # noqa: E402


def run_job(job):
    """One job (see above) in this process: its exit status."""
    if "pack" in job:
        from tests.backends.task_packing_worker import pack

        np.savez(job["pack"], **pack())
        return 0
    fit, reserve = pipeline.resumable_fit, pipeline._TIME_BUDGET_RESERVE_SECONDS
    try:
        if "time_budget_reserve_seconds" in job:
            pipeline._TIME_BUDGET_RESERVE_SECONDS = float(job["time_budget_reserve_seconds"])
        if "kill_at_batch" in job:
            pipeline.resumable_fit = killed_after_batches(fit, int(job["kill_at_batch"]))
        return main(job["argv"])
    finally:
        pipeline.resumable_fit, pipeline._TIME_BUDGET_RESERVE_SECONDS = fit, reserve


def _look_at(path):
    path = pathlib.Path(path)
    if path.is_dir():
        return "<directory>"
    return path.read_text() if path.is_file() else None


def run_jobs(jobs_path, results_path):
    results = []
    for job in json.loads(open(jobs_path).read()):
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                returncode = run_job(job)
            except Exception:  # noqa: BLE001 (reported as a crashed command's would be)
                traceback.print_exc()
                returncode = 1
        looked_at = {path: _look_at(path) for path in job.get("look_at", ())}
        results.append(dict(returncode=returncode, stdout=stdout.getvalue(), stderr=stderr.getvalue(),
                            looked_at=looked_at))
        with open(results_path, "w") as results_file:
            json.dump(results, results_file)


if __name__ == "__main__":
    run_jobs(*sys.argv[1:])
