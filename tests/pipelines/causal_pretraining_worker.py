"""`python -m keras_albert ARGS` for the causal-LM pretraining tests:
with BLOCK_TENSORFLOW=1, TensorFlow is unimportable (a machine without
it); with KILL_AT_BATCH=n, the process SIGKILLs itself after n training
batches, the way a preempted machine dies (no cleanup, no handlers)."""

import os
import sys

if os.environ.get("BLOCK_TENSORFLOW") == "1":
    sys.modules["tensorflow"] = None
    sys.modules["tensorflow_text"] = None

from keras_albert.cli.main import main  # noqa: E402
from keras_albert.pipelines import causal_pretraining  # noqa: E402
from tests.preemption import killed_after_batches  # noqa: E402

if __name__ == "__main__":
    if "KILL_AT_BATCH" in os.environ:
        causal_pretraining.resumable_fit = killed_after_batches(
            causal_pretraining.resumable_fit, int(os.environ["KILL_AT_BATCH"])
        )
    sys.exit(main(sys.argv[1:]))
