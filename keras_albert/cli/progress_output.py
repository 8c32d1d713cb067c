"""Shows the library's progress lines on stdout while a command runs.

stdout, not stderr: the commands' own progress (epochs, steps, Keras's
bars) is on stdout, and stderr stays for warnings and the one `error: ...`
line a failure ends with.
"""

import contextlib
import logging
import sys

LOGGER_NAME = "keras_albert"


class _CurrentStream(logging.StreamHandler):
    """Writes to whatever `sys.stdout` or `sys.stderr` is at the time
    (pytest and notebooks swap them)."""

    def __init__(self, name):
        super().__init__()
        self._name = name

    @property
    def stream(self):
        return getattr(sys, self._name)

    @stream.setter
    def stream(self, value):
        pass  # StreamHandler.__init__ sets it; the property decides.


def _handler(name, level_format, keep):
    handler = _CurrentStream(name)
    handler.setFormatter(logging.Formatter(f"[%(asctime)s] {level_format}%(message)s", datefmt="%H:%M:%S"))
    handler.addFilter(keep)
    return handler


@contextlib.contextmanager
def showing_progress(stream="stdout"):
    """INFO lines of the "keras_albert" loggers on `stream` ("stdout", or
    "stderr" when a command's results go to stdout) as `[HH:MM:SS]
    message`; warnings and errors on stderr."""
    logger = logging.getLogger(LOGGER_NAME)
    handlers = [
        _handler(stream, "", lambda record: record.levelno < logging.WARNING),
        _handler("stderr", "%(levelname)s: ", lambda record: record.levelno >= logging.WARNING),
    ]
    level, propagate = logger.level, logger.propagate
    for handler in handlers:
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    # Not passed on to absl's handler on the root logger as well: each line
    # once.
    logger.propagate = False
    try:
        yield
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
