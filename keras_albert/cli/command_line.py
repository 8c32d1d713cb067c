"""One command's flags, parsed with absl.

Each command defines its flags on a fresh `flags.FlagValues` (the commands
share names such as --preset and --output with different meanings, so one
global FLAGS cannot hold them all). absl's own flags (logging, debugging)
are added beside them, so `--verbosity`, `--flagfile=FILE` and the rest
work with every command; parsing marks absl's global FLAGS as parsed, as
`absl.app.run` expects.
"""

import re
import sys

# absl.app defines its flags (--run_with_pdb, ...) and absl.logging's
# (--verbosity, --log_dir, ...) on the global FLAGS when imported.
from absl import app  # noqa: F401
from absl import flags

PROGRAM = "python -m keras_albert"
# absl's global help flags print the global FLAGS, which lack the command's
# flags: the command's own --help, --helpshort and --helpfull replace them.
_NOT_FORWARDED = ("help", "helpshort", "helpfull", "helpxml", "only_check_flags")
# How absl reports a missing `required=True` flag, one line per flag.
_MISSING = re.compile(r"flag --(\w+)=None: Flag --\1 must have a value other than None\.")


class Exit(Exception):
    """The command line is answered without running a command: help shown
    (`code` 0) or a one-line error on stderr (`code` 2)."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


class _HelpRequested(Exception):
    def __init__(self, full):
        super().__init__(full)
        self.full = full


class _HelpFlag(flags.BooleanFlag):
    """Shows help as soon as it is parsed, as absl's own help flags do:
    before required flags are checked."""

    def __init__(self, name, full, help, short_name=None):
        super().__init__(name, False, help, short_name=short_name)
        self.full = full

    def parse(self, argument):
        super().parse(argument)
        if self.value:
            raise _HelpRequested(self.full)


def fail(message):
    """Reports bad command-line input as one line and exits with 2."""
    # absl reports each failed check (say, each missing required flag) on
    # a line of its own.
    lines = [" ".join(line.split()) for line in str(message).splitlines()]
    print(f"error: {'; '.join(line for line in lines if line)}", file=sys.stderr)
    raise Exit(2)


# absl's help for a flag made by `flags.DEFINE_alias`.
_ALIAS_HELP = re.compile(r"Alias for --(\w+)\.")


def hide_in_help(flag):
    """Parsed, but not listed in --help: another spelling of a flag whose
    help names it."""
    flag.hidden_in_help = True
    return flag


def _alias_of(flag, flag_values):
    match = _ALIAS_HELP.fullmatch(flag.help or "")
    return flag_values[match.group(1)] if match and match.group(1) in flag_values else None


def _hidden_flags(flag_values):
    """Names of the flags --help leaves out: aliases and flags marked with
    `hide_in_help`."""
    return {
        name for name in flag_values
        if _alias_of(flag_values[name], flag_values) is not None
        or getattr(flag_values[name], "hidden_in_help", False)
    }


def _name_aliases(flag_values):
    """Each aliased flag's help ends "(also --ALIAS)", in place of the
    alias's own entry."""
    for name in list(flag_values):
        original = _alias_of(flag_values[name], flag_values)
        if original is not None:
            original.help = f"{original.help} (also --{name})"


def _without_flags(help_text, names):
    """absl's flag list without the entries of `names` (an entry is its
    `  --name: ...` line and the more-indented lines under it)."""
    kept, skipping = [], False
    for line in help_text.split("\n"):
        entry = re.match(r"  (?:-\w,)?--(?:\[no\])?(\w+):", line)
        if entry:
            skipping = entry.group(1) in names
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def command_flags(module):
    """A FlagValues with `module`'s flags, help flags and absl's flags."""
    flag_values = flags.FlagValues()
    module.define_flags(flag_values)
    _name_aliases(flag_values)
    for name in list(flag_values):
        # absl files a flag under the module that called DEFINE_*; --help
        # lists the command's flags even if a helper defined them.
        flag_values.register_key_flag_for_module(module.__name__, flag_values[name])
    for flag in (
        _HelpFlag("help", False, "show this command's flags", short_name="h"),
        _HelpFlag("helpshort", False, "same as --help"),
        _HelpFlag("helpfull", True, "show all flags, absl's (logging, debugging) too"),
    ):
        flags.DEFINE_flag(flag, flag_values, module_name=__name__)
    for module_name, module_flags in flags.FLAGS.flags_by_module_dict().items():
        for flag in module_flags:
            taken = flag.name in flag_values or flag.short_name in flag_values
            if flag.name not in _NOT_FORWARDED and not taken:
                # The same Flag object: what is parsed here, absl.logging
                # and absl.app read through the global FLAGS.
                flag_values[flag.name] = flag
                flag_values.register_flag_by_module(module_name, flag)
                flag_values.register_key_flag_for_module(module_name, flag)
    return flag_values


def _multi_valued(flag_values, word):
    """The name of the repeatable flag `word` sets, and whether it has `=`."""
    if not word.startswith("-"):
        return None, False
    name, equals, _ = word.lstrip("-").partition("=")
    if name in flag_values and isinstance(flag_values[name], flags.MultiFlag):
        return flag_values[name].name, bool(equals)
    return None, False


def gather_values(arguments, flag_values):
    """`--corpus a.txt b.txt` -> `--corpus=a.txt --corpus=b.txt`.

    absl takes several values as a repeated flag; the commands have always
    also taken them as a list after one flag (what a shell glob expands
    to). No command takes positional arguments, so a bare word after a
    repeatable flag's values is one more value.
    """
    gathered, name, waiting = [], None, False
    for word in arguments:
        if name and not word.startswith("-"):
            gathered.append(f"--{name}={word}")
            waiting = False
            continue
        if waiting:
            # absl would take the next flag as the value.
            raise flags.Error(f"Missing value for flag --{name}")
        name, has_value = _multi_valued(flag_values, word)
        waiting = bool(name) and not has_value
        if not waiting:
            gathered.append(word)
    if waiting:
        raise flags.Error(f"Missing value for flag --{name}")
    return gathered


def _flagfile(words, at):
    """(file name, words it takes) if `words[at]` is a --flagfile directive."""
    word = words[at]
    name, equals, value = word.lstrip("-").partition("=")
    if not word.startswith("-") or name != "flagfile":
        return None, 0
    if equals:
        return value, 1
    if at + 1 == len(words):
        raise flags.Error("Missing value for flag --flagfile")
    return words[at + 1], 2


def _read_flagfile(flag_values, path):
    try:
        return flag_values.read_flags_from_files([f"--flagfile={path}"], force_gnu=False)
    except UnicodeDecodeError as error:
        raise ValueError(
            f"`--flagfile` {path!r} is not UTF-8 text ({error.reason} at byte {error.start}); "
            "write it as UTF-8, one --name=value per line."
        ) from None


def expand_flagfiles(words, flag_values):
    """The words with each --flagfile replaced by its flags, where a list
    flag set again later (on the command line after the file, or in a later
    file) replaces, not extends, the earlier values: flags after a file win.
    """
    sources, plain, at = [], [], 0
    while at < len(words):
        path, taken = _flagfile(words, at)
        if taken:
            sources += [plain, _read_flagfile(flag_values, path)]
            plain, at = [], at + taken
        else:
            plain.append(words[at])
            at += 1
    sources.append(plain)
    last = {}
    for index, source in enumerate(sources):
        for word in source:
            name = _multi_valued(flag_values, word)[0]
            if name:
                last[name] = index
    return [
        word for index, source in enumerate(sources) for word in source
        if last.get(_multi_valued(flag_values, word)[0], index) == index
    ]


def parse_flags(flag_values, arguments, program=PROGRAM):
    """Parses `arguments` into `flag_values` (--flagfile included).

    Raises `_HelpRequested`, `flags.Error` or ValueError (absl's errors) or
    `Exit` (a positional argument)."""
    words = expand_flagfiles(gather_values(arguments, flag_values), flag_values)
    unparsed = flag_values([program, *words])
    if unparsed[1:]:
        stray = unparsed[1]
        # Most often a boolean's value written after a space: name that flag.
        at = arguments.index(stray) if stray in arguments else 0
        after = f" after {arguments[at - 1]}" if at > 0 and arguments[at - 1].startswith("--") else ""
        fail(
            f"unexpected argument {stray!r}{after}: flags are written --name=value "
            "or --name value, booleans --name, --noname or --name=false"
        )
    flags.FLAGS.mark_as_parsed()


def parse_command(name, module, arguments):
    """`module`'s parsed FlagValues, or `Exit` after help or an error."""
    flag_values = command_flags(module)
    program = f"{PROGRAM} {name}"
    try:
        parse_flags(flag_values, arguments, program)
    except _HelpRequested as request:
        print(command_help(program, module, flag_values, full=request.full))
        raise Exit(0) from None
    except (flags.Error, ValueError) as error:
        message = str(error).removeprefix("ERROR:: ")  # absl's flagfile errors
        missing = [_MISSING.fullmatch(line.strip()) for line in message.splitlines()]
        only_missing = bool(missing) and all(missing)
        if only_missing:
            names = [f"--{match.group(1)}" for match in missing]
            message = f"missing required flag{'s' if len(names) > 1 else ''} {', '.join(names)}"
        if only_missing or isinstance(error, flags.UnrecognizedFlagError):
            message += f" ({program} --help lists the flags)"
        fail(message)
    return flag_values


def command_help(program, module, flag_values, full=False):
    """Usage, the module docstring as written (its example command lines
    each on their own line), the flags with their defaults; with `full`,
    the help flags and absl's flags after them."""
    # absl heads each module's list with the module's name; the command's
    # own list reads better as "flags:".
    own = flag_values.module_help(module.__name__).strip().split("\n", 1)[1]
    own = _without_flags(own, _hidden_flags(flag_values))
    sections = [f"usage: {program} --flag=value ...", "", module.__doc__.strip(), "", "flags:", own]
    if full:
        others = sorted(set(flag_values.flags_by_module_dict()) - {module.__name__})
        sections += [flag_values.module_help(name) for name in others]
    sections += [
        "",
        "Booleans: --name, --noname or --name=false. --flagfile=FILE reads flags",
        "from FILE, one per line (--name=value).",
    ]
    if not full:
        sections.append("--helpfull also lists absl's flags (--verbosity, --log_dir, --run_with_pdb, ...).")
    return "\n".join(sections)
