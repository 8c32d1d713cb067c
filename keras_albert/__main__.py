"""`python -m keras_albert COMMAND ...`; see `--help`."""

from keras_albert.cli.main import run_as_app

run_as_app()
