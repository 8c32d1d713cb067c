"""Command line: `python -m keras_albert <command> --help`."""
