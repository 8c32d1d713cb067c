"""`python -m keras_albert`: one entry point, one module per command.

Building the parsers imports no TensorFlow (the command modules import
their pipelines inside `run`), so `--help` and flag errors answer at once.
"""

import argparse
import importlib
import sys

COMMANDS = {
    "pretrain": "keras_albert.cli.pretrain_command",
    "finetune": "keras_albert.cli.finetune_command",
    "convert": "keras_albert.cli.convert_command",
    "export": "keras_albert.cli.export_command",
    "distill": "keras_albert.cli.distill_command",
}


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m keras_albert",
        description="ALBERT for Keras 3: pretrain, fine-tune, convert, export, distill.\n\n"
        "  python -m keras_albert COMMAND --help    flags of one command",
        # Keeps the example command lines of the docstrings on their own lines.
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        module.add_arguments(
            commands.add_parser(
                name, help=module.HELP, description=module.__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        )
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    # What `import keras_albert` registers (classes, the keras-hub preset
    # converter), which `python -m keras_albert` skipped for speed.
    importlib.import_module("keras_albert.public_api")
    try:
        importlib.import_module(COMMANDS[args.command]).run(args)
    except Exception as error:  # noqa: BLE001 (re-raised unless bad input)
        if not _is_input_error(error):
            raise
        # Bad input or an unusable path (PermissionError, a full disk, an
        # archive refusal): one line that says what is wrong, exit 2 as
        # argparse does for bad flags.
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2
    return 0


def _tensorflow_op_error():
    # Only a run that imported TensorFlow can raise its errors.
    tf = sys.modules.get("tensorflow")
    return tf.errors.OpError if tf is not None else ()


def _is_input_error(error):
    return isinstance(error, (ValueError, OSError)) or isinstance(error, _tensorflow_op_error())


def _one_line(error):
    message = " ".join(str(error).split())
    if isinstance(error, _tensorflow_op_error()):
        message = " ".join(str(error.message).split())
    return message or type(error).__name__
