"""`python -m keras_albert ARGS` (pretrain, finetune) with TensorFlow unimportable (as on a
machine without it), optionally SIGKILLed after KILL_AT_BATCH training
batches of this process, the way a preempted machine dies; one job of
cli_batch_worker.py, which does the patching.

    KERAS_BACKEND=jax python tests/backends/cli_worker.py pretrain ...
"""

import os
import sys

from tests.backends.cli_batch_worker import (
    run_job,  # blocks TensorFlow as it is imported
)

if __name__ == "__main__":
    job = {"argv": sys.argv[1:]}
    if "TIME_BUDGET_RESERVE_SECONDS" in os.environ:
        # A budget of seconds, for the test, instead of a lent machine's minutes.
        job["time_budget_reserve_seconds"] = os.environ["TIME_BUDGET_RESERVE_SECONDS"]
    if "KILL_AT_BATCH" in os.environ:
        job["kill_at_batch"] = os.environ["KILL_AT_BATCH"]
    sys.exit(run_job(job))
