"""keras_albert: ALBERT for Keras 3 (TensorFlow, JAX and PyTorch backends)."""

import importlib
import os
import sys

# TensorFlow stays the default; KERAS_BACKEND=jax or torch trains without it.
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# TensorFlow's C++ INFO lines (CPU instruction sets, oneDNN) say nothing a
# user can act on; warnings and errors still show. A value the user set
# wins; it only takes effect if TensorFlow is not imported yet. The lines
# written before absl logging starts ignore it:
# utils/native_notices.py holds those back.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

__version__ = "0.1.0"

# `python -m keras_albert` imports this package before it runs __main__, and
# sys.argv[0] is "-m" only during that import. The API (and TensorFlow) is
# left out then so `--help` answers at once; the CLI imports it before a
# command runs.
if sys.argv[:1] != ["-m"]:
    from keras_albert.utils.backend import check_backend

    if check_backend() == "tensorflow":
        from keras_albert.utils.native_notices import import_tensorflow_quietly

        import_tensorflow_quietly()
    from keras_albert.public_api import *  # noqa: F401, F403
else:
    def __getattr__(name):
        # `python -m keras_albert.some_module` also starts with "-m": the
        # API is then imported on first use.
        if not name.startswith("__"):
            public_api = importlib.import_module("keras_albert.public_api")
            if hasattr(public_api, name):
                return getattr(public_api, name)
        raise AttributeError(f"module 'keras_albert' has no attribute {name!r}")
