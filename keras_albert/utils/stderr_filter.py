"""The filter process of `native_notices.stderr_filtered`:

    python -m keras_albert.utils.stderr_filter NOTICES_JSON

copies its stdin to its stdout without the lines that match one of the
regular expressions in NOTICES_JSON, until the command it serves closes the
pipe (or dies).
"""

import json
import signal
import sys

from keras_albert.utils.native_notices import forward_without_notices


def main():
    # Ctrl-C reaches the whole process group: the command prints its
    # traceback, and this process must live to pass it on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    forward_without_notices(sys.stdin.fileno(), sys.stdout.fileno(), json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
