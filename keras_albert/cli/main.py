"""`python -m keras_albert`: one entry point, one module per command."""

import argparse
import sys

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
    except (ValueError, FileNotFoundError) as error:
        # Bad input: say what is wrong without a traceback.
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
