"""Shows the library's progress lines on stdout while a command runs.

stdout, not stderr: the commands' own progress (epochs, steps, Keras's
bars) is on stdout, and stderr stays for the one `error: ...` line a
failure ends with.
"""

import contextlib
import logging
import sys

LOGGER_NAME = "keras_albert"


class _CurrentStdout(logging.StreamHandler):
    """Writes to whatever `sys.stdout` is at the time (pytest swaps it)."""

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, value):
        pass


@contextlib.contextmanager
def showing_progress():
    """INFO lines of the "keras_albert" loggers as `[HH:MM:SS] message`."""
    logger = logging.getLogger(LOGGER_NAME)
    handler = _CurrentStdout()
    handler.setFormatter(logging.Formatter("[%(asctime)s] %(message)s", datefmt="%H:%M:%S"))
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    # Not passed on to absl's handler on the root logger as well: each line
    # once, on stdout.
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
