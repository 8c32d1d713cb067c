"""absl flag kinds the commands share."""

import dataclasses

from absl import flags

from keras_albert.cli.command_line import hide_in_help

_TRUE = ("true", "t", "1", "yes", "on")
_FALSE = ("false", "f", "0", "no", "off")


class _BooleanParser(flags.BooleanParser):
    """absl's boolean parser, also taking yes/no and on/off (as the
    commands always have), with an error that lists what it accepts."""

    def parse(self, argument):
        if isinstance(argument, str) and argument.lower() in _TRUE + _FALSE:
            return argument.lower() in _TRUE
        if isinstance(argument, bool):
            return argument
        raise ValueError("expected true or false (also 1/0, yes/no, on/off)")


def define_boolean(name, default, help, flag_values):
    """--NAME, --noNAME or --NAME=true/false (not `--NAME false`: a value
    after a space is not the flag's)."""
    flag = flags.Flag(_BooleanParser(), None, name, default, help, boolean=True)
    return flags.DEFINE_flag(flag, flag_values)


def define_tensorboard_flags(flag_values, default):
    """--tensorboard=BOOL, and --no_tensorboard as the commands have always
    spelt it (absl's own negation is --notensorboard)."""
    define_boolean("tensorboard", default,
                   "write TensorBoard logs to OUTPUT/logs (off: --notensorboard or --no_tensorboard)",
                   flag_values)
    define_boolean("no_tensorboard", False, "same as --notensorboard", flag_values)
    # One flag in --help: --[no]tensorboard.
    hide_in_help(flag_values["no_tensorboard"])


def tensorboard(flag_values):
    """The --tensorboard value, after --no_tensorboard."""
    return flag_values.tensorboard and not flag_values.no_tensorboard


def define_classifier_flags(fv, defaults):
    """The flags `predict` and `evaluate` share: the classifier and how
    it runs."""
    flags.DEFINE_string("preset", defaults.preset,
                        "text classifier preset: directory (finetune's preset/) or bundled name",
                        flag_values=fv)
    flags.DEFINE_string("saved_model", defaults.saved_model,
                        "serving SavedModel directory (finetune's serving/); TensorFlow only",
                        flag_values=fv)
    flags.DEFINE_multi_string("text_columns", list(defaults.text_columns),
                              "table inputs: one column, or two for pairs (--text_columns a b)", flag_values=fv)
    flags.DEFINE_integer("batch_size", defaults.batch_size, "texts per batch", flag_values=fv)
    flags.DEFINE_integer("sequence_length", defaults.sequence_length,
                         "--preset: pieces per text (default: the preset's)", flag_values=fv)
    define_boolean("overwrite", defaults.overwrite, "replace an existing --output file", fv)


def settings_from_flags(settings_class, flag_values, **values):
    """A pipeline's settings dataclass from the flags of the same names;
    `values` set fields whose flags differ."""
    for field in dataclasses.fields(settings_class):
        values.setdefault(field.name, flag_values[field.name].value)
    return settings_class(**values)


# The flags these helpers define belong to the command that calls them (its
# --help lists them), not to this module.
flags.disclaim_key_flags()


def read_lines(path, flag):
    """The non-blank lines of the text file a flag names, stripped.

    Lines end at "\n" ("\r\n" too), not at the other breaks `splitlines`
    knows (U+2028 inside a text is part of it); a leading BOM is dropped."""
    import pathlib

    from keras_albert.utils.text_lines import text_lines

    return text_lines(pathlib.Path(path).read_bytes(), flag, repr(path))
