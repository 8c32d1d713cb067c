"""Command line: `python -m keras_albert COMMAND --help`.

absl flags, one module per command; `main.py` says what a command module
holds and how to add one.
"""
