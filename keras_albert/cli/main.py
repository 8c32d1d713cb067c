"""`python -m keras_albert COMMAND --flag=value ...`: one module per command.

A command is a module `keras_albert/cli/NAME_command.py` with
  - a docstring: what the command does and example command lines (its
    `--help` prints it as written, then the flags);
  - `HELP`: one line for the list of commands;
  - `define_flags(flag_values)`: absl `flags.DEFINE_*(..., flag_values=
    flag_values)` calls; the module imports no TensorFlow, so that `--help`
    and flag errors answer at once;
  - `run(flag_values)`: imports what it needs and does the work, saying
    what it does before each long step (print, or a "keras_albert" logger:
    `keras_albert.utils.progress.logged_step`). A ValueError or OSError is
    bad input: one `error: ...` line on stderr and exit status 2;
  - optionally `check_inputs(flag_values)`: checks that need no
    TensorFlow (files exist, an output is not in the way), run before
    TensorFlow is imported, so bad input answers at once;
  - optionally `results_on_stdout(flag_values)`: True when the command
    writes its results to stdout; its progress lines then go to stderr.
Adding a command is that module and one line in `COMMANDS`.

`python -m keras_albert` runs through `absl.app.run` (absl logging, its
debugging flags); `main(argv)` runs a command in this process and returns
its exit status (tests, tools).
"""

import collections
import difflib
import importlib
import logging
import os
import signal
import sys

from absl import app
from absl import flags
from absl import logging as absl_logging

from keras_albert.cli import command_line
from keras_albert.cli.progress_output import showing_progress
from keras_albert.utils.backend import BackendError
from keras_albert.utils.backend import TensorFlowRequiredError
from keras_albert.utils.backend import check_backend
from keras_albert.utils.native_notices import drop_retracing_warnings
from keras_albert.utils.native_notices import import_tensorflow_quietly
from keras_albert.utils.native_notices import stderr_filtered
from keras_albert.utils.progress import logged_step

COMMANDS = {
    "pretrain": "keras_albert.cli.pretrain_command",
    "finetune": "keras_albert.cli.finetune_command",
    "convert": "keras_albert.cli.convert_command",
    "export": "keras_albert.cli.export_command",
    "distill": "keras_albert.cli.distill_command",
    "publish": "keras_albert.cli.publish_command",
    "predict": "keras_albert.cli.predict_command",
    "evaluate": "keras_albert.cli.evaluate_command",
    "generate": "keras_albert.cli.generate_command",
}
Command = collections.namedtuple("Command", ["name", "module", "flag_values"])
_logger = logging.getLogger(__name__)


def top_level_help():
    width = max(len(name) for name in COMMANDS)
    lines = [
        f"usage: {command_line.PROGRAM} COMMAND --flag=value ...",
        "",
        f"ALBERT for Keras 3: {', '.join(COMMANDS)}.",
        "",
        "commands:",
    ]
    for name, module_name in COMMANDS.items():
        lines.append(f"    {name:<{width}}  {importlib.import_module(module_name).HELP}")
    lines += [
        "",
        f"{command_line.PROGRAM} COMMAND --help      the command's flags, with their defaults",
        f"{command_line.PROGRAM} COMMAND --helpfull  absl's flags too (logging, debugging)",
        f"{command_line.PROGRAM} COMMAND --flagfile=FILE ...  flags read from FILE, one per line",
    ]
    return "\n".join(lines)


def parse(arguments):
    """The command named first in `arguments`, its flags parsed; raises
    `command_line.Exit` after help or a bad command line."""
    if not arguments or arguments[0] in ("-h", "--help", "--helpshort", "--helpfull"):
        if arguments:
            print(top_level_help())
            raise command_line.Exit(0)
        command_line.fail(f"name a command: {', '.join(COMMANDS)} ({command_line.PROGRAM} --help)")
    name = arguments[0]
    if name not in COMMANDS:
        close = difflib.get_close_matches(name, COMMANDS, n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        command_line.fail(f"unknown command {name!r}; {guess}the commands: {', '.join(COMMANDS)}")
    module = importlib.import_module(COMMANDS[name])
    return Command(name, module, command_line.parse_command(name, module, arguments[1:]))


def run_command(command):
    """Runs a parsed command; returns 0, or 2 after bad input."""
    results_on_stdout = getattr(command.module, "results_on_stdout", lambda flag_values: False)
    with showing_progress("stderr" if results_on_stdout(command.flag_values) else "stdout"):
        try:
            # Bad input answers before the seconds TensorFlow takes to import;
            # an unknown or missing backend too (Keras would say only "Unable
            # to import backend", after the flags were checked).
            check_backend()
            getattr(command.module, "check_inputs", lambda flag_values: None)(command.flag_values)
            _import_api()
            command.module.run(command.flag_values)
        except Exception as error:  # noqa: BLE001 (re-raised unless bad input)
            if not _is_input_error(error):
                raise
            # Bad input or an unusable path (PermissionError, a full disk, an
            # archive refusal): one line that says what is wrong, exit 2 as
            # for bad flags.
            print(f"error: {_one_line(error)}", file=sys.stderr)
            return 2
    return 0


def _import_api():
    # What `import keras_albert` registers (classes, the keras-hub preset
    # converter), which `python -m keras_albert` skipped for speed; the
    # first import of TensorFlow takes seconds.
    if "tensorflow" in sys.modules:
        importlib.import_module("keras_albert.public_api")
        return
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    if backend != "tensorflow":
        with logged_step(_logger, f"Importing keras_albert ({backend})"):
            importlib.import_module("keras_albert.public_api")
        return
    with logged_step(_logger, "Importing TensorFlow and keras_albert"):
        import_tensorflow_quietly()
        importlib.import_module("keras_albert.public_api")


def main(argv=None):
    """Runs `argv` (default: sys.argv[1:]) in this process; returns the
    exit status."""
    try:
        command = parse(list(sys.argv[1:] if argv is None else argv))
    except command_line.Exit as done:
        return done.code
    return run_command(command)


def _parse_or_exit(argv):
    try:
        command = parse(argv[1:])
    except command_line.Exit as done:
        sys.exit(done.code)
    if flags.FLAGS["verbosity"].using_default_value:
        # absl.app would lower the threshold to INFO, which shows TensorFlow's
        # INFO lines (signature renames, sharding callbacks) on stderr; the
        # commands' own progress is on stdout. --verbosity=0 shows them.
        flags.FLAGS.verbosity = absl_logging.WARNING
    return command


def run_as_app():
    """`python -m keras_albert`: absl.app.run sets up absl logging (and
    --run_with_pdb, --run_with_profiling, ...) around the command. stderr
    shows what a user can act on: TensorFlow's notices that say nothing to
    do are dropped line by line (`native_notices.stderr_filtered`), every
    other line shows as it comes."""
    drop_retracing_warnings()
    try:
        try:
            with stderr_filtered():
                app.run(run_command, flags_parser=_parse_or_exit)
        finally:
            # Here, not at exit: a pipe's buffered output meets a closed
            # reader on this flush, where the error can still be caught.
            sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`--help | head -3`): it read what it
        # wanted. No traceback; Python's exit flush would fail again on the
        # closed pipe, so stdout goes nowhere. 141 is what a shell reports
        # for a writer whose reader left (128 + SIGPIPE).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(128 + signal.SIGPIPE)


def _tensorflow_op_error():
    # Only a run that imported TensorFlow can raise its errors.
    tf = sys.modules.get("tensorflow")
    return tf.errors.OpError if tf is not None else ()


def _is_input_error(error):
    # A TensorFlow-only feature (export, publish) run without TensorFlow is
    # a missing install, not a bug: one line that says what to install.
    return (isinstance(error, (ValueError, OSError, TensorFlowRequiredError, BackendError))
            or isinstance(error, _tensorflow_op_error()))


def _one_line(error):
    message = " ".join(str(error).split())
    if isinstance(error, _tensorflow_op_error()):
        message = " ".join(str(error.message).split())
    return message or type(error).__name__
