"""`python -m keras_albert`: one entry point, one module per command."""

import argparse
import sys

import tensorflow as tf

from keras_albert.cli import convert_command
from keras_albert.cli import distill_command
from keras_albert.cli import export_command
from keras_albert.cli import finetune_command
from keras_albert.cli import pretrain_command

COMMANDS = {
    "pretrain": pretrain_command,
    "finetune": finetune_command,
    "convert": convert_command,
    "export": export_command,
    "distill": distill_command,
}


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m keras_albert",
        description="ALBERT for Keras 3: pretrain, fine-tune, convert, export.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        module.add_arguments(
            commands.add_parser(name, help=module.HELP, description=module.__doc__)
        )
    args = parser.parse_args(argv)
    try:
        COMMANDS[args.command].run(args)
    except (ValueError, OSError, tf.errors.OpError) as error:
        # Bad input or an unusable path (PermissionError, a full disk, an
        # archive refusal): one line that says what is wrong, exit 2 as
        # argparse does for bad flags.
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2
    return 0


def _one_line(error):
    message = " ".join(str(error).split())
    if isinstance(error, tf.errors.OpError):
        message = " ".join(str(error.message).split())
    return message or type(error).__name__
