"""`python -m keras_albert ARGS` (pretrain, finetune) with TensorFlow unimportable (as on a
machine without it), optionally SIGKILLed after KILL_AT_BATCH training
batches of this process, the way a preempted machine dies.

    KERAS_BACKEND=jax python tests/backends/cli_worker.py pretrain ...
"""

import os
import sys

sys.modules["tensorflow"] = None
sys.modules["tensorflow_text"] = None

from keras_albert.cli.main import main  # noqa: E402
from keras_albert.pipelines import pretraining as pipeline  # noqa: E402
from tests.preemption import killed_after_batches  # noqa: E402

if __name__ == "__main__":
    if "TIME_BUDGET_RESERVE_SECONDS" in os.environ:
        # A budget of seconds, for the test, instead of a lent machine's minutes.
        pipeline._TIME_BUDGET_RESERVE_SECONDS = float(os.environ["TIME_BUDGET_RESERVE_SECONDS"])
    if "KILL_AT_BATCH" in os.environ:
        pipeline.resumable_fit = killed_after_batches(pipeline.resumable_fit, int(os.environ["KILL_AT_BATCH"]))
    sys.exit(main(sys.argv[1:]))
