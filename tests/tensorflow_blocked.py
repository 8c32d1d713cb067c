"""A pytest plugin that makes TensorFlow unimportable, as on a machine
without it (the device machines lent to some sessions have none):

    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests ...

Loaded by `-p` before any test module, so a module that imports TensorFlow
fails to collect instead of finding the one installed here.
"""

import sys

for _name in ("tensorflow", "tensorflow_text", "tf_keras"):
    sys.modules[_name] = None
