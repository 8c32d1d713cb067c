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


def logged_chunks(logger, count, chunk, done):
    """`(start, stop)` of each chunk of `count` items; after each, when
    there is more than one, logs "`done`: stop/count (P %), seconds, time
    left" (e.g. `done="Texts classified"`).

    Example:
    >>> import logging
    >>> list(logged_chunks(logging.getLogger("keras_albert.example"), 5, 2, "Texts read"))
    [(0, 2), (2, 4), (4, 5)]
    """
    start_time = time.monotonic()
    for start in range(0, count, chunk):
        stop = min(start + chunk, count)
        yield start, stop
        if count > chunk:
            elapsed = time.monotonic() - start_time
            left = f", about {elapsed / stop * (count - stop):.0f} s left" if stop < count else ""
            logger.info("%s: %s/%s (%d %%), %.0f s%s",
                        done, f"{stop:,}", f"{count:,}", 100 * stop // count, elapsed, left)
