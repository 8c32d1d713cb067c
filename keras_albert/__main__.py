"""`python -m keras_albert COMMAND ...`; see `--help`."""

import sys

from keras_albert.cli.main import main

sys.exit(main())
