"""`require_tensorflow` inside a tf.function trace (the TF-Hub
preprocessor's text normalisation calls it there) makes AutoGraph warn
about nothing."""

import logging

import pytest

from keras_albert.utils.backend import require_tensorflow


class _Messages(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_a_traced_call_makes_autograph_warn_about_nothing():
    tf = pytest.importorskip("tensorflow", reason="tf.function is TensorFlow's")
    handler = _Messages()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    try:
        @tf.function
        def traced(x):
            assert require_tensorflow("A traced feature", backend_too=False) is tf
            return x + 1

        assert int(traced(tf.constant(1))) == 2
    finally:
        logger.removeHandler(handler)
    # Before: "AutoGraph could not transform <function _gcd_import ...>".
    assert [m for m in handler.messages if "AutoGraph" in m] == []
