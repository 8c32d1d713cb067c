"""Progress of long steps, logged with their durations.

Library code logs what it is doing through the standard `logging` module
(loggers under "keras_albert"); it never prints. Applications decide where
the lines go: the command line shows them on stdout
(`keras_albert/cli/progress_output.py`), a notebook with
`logging.basicConfig(level=logging.INFO)`.
"""

import contextlib
import time


@contextlib.contextmanager
def logged_step(logger, description):
    """Logs `description` when a step starts and its duration when it ends.

    A step that raises logs nothing more: the error says what went wrong.

    Example:
    >>> import logging
    >>> with logged_step(logging.getLogger("keras_albert.example"), "Counting"):
    ...     total = sum(range(10))
    >>> total
    45
    """
    logger.info("%s ...", description)
    start = time.monotonic()
    yield
    logger.info("%s: done in %.1f s", description, time.monotonic() - start)
