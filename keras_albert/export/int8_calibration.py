"""The texts full int8 export calibrates on, and the held-out ones it is checked on.

Calibration sets each activation's int8 range from the texts it sees, so a
file checked on its own calibration texts is graded on its homework. Here
the two are kept apart: agreement with Keras is measured only on check
texts that are not calibration texts (compared case- and
whitespace-insensitively, as the tokenizer reads them).

Defaults, when a caller passes none, come from the bundled corpora, never
from their held-out parts: calibration on a fixed sample of WordNet glosses
of the supersense training split and of sentences from the five Austen
novels kept for pretraining; checks on a fixed sample of supersense
validation glosses.
"""

import functools

import numpy as np

from keras_albert import datasets

# Fewer calibration texts than this leave ranges set by a handful of
# tokens and positions; the default sample has 300.
MIN_CALIBRATION_TEXTS = 100
# Below 100 held-out texts a 99 % agreement threshold cannot tell one
# disagreement from none.
MIN_CHECK_TEXTS = 100
# Short definitions and long novel sentences: the sample covers both
# short inputs and ones that fill (and are cut at) the sequence length.
DEFAULT_CALIBRATION_GLOSSES = 200
DEFAULT_CALIBRATION_SENTENCES = 100
DEFAULT_HELD_OUT_GLOSSES = 200
_SEED = 0
# How messages name the two inputs and how to get their defaults: the
# Python arguments here; the export command passes its flags.
ARGUMENT_NAMES = {
    "representative_texts": ("`representative_texts`", "representative_texts=None"),
    "check_texts": ("`check_texts`", "check_texts=None"),
}
FLAG_NAMES = {
    "representative_texts": ("`--calibration_texts`", "leave --calibration_texts out"),
    "check_texts": ("`--texts`", "leave --texts out"),
}


def _seeded_sample(texts, count):
    order = np.random.default_rng(_SEED).permutation(len(texts))[:count]
    return [texts[i] for i in sorted(order)]


def default_calibration_texts():
    """300 texts: 200 supersense training glosses and 100 sentences of the
    pretraining Austen novels, drawn with a fixed seed (the same on every
    machine and run)."""
    return list(_bundled_calibration_sample())


def default_check_texts():
    """200 supersense validation noun glosses, a fixed sample spread over the
    supersenses: held out of the default calibration sample, of the bundled
    presets' pretraining and of their fine-tuning."""
    return list(_bundled_check_sample())


# Drawn once per process: the export command checks its texts before
# loading the preset and the export checks them again (reading the novels
# took 1.4 s).
@functools.cache
def _bundled_calibration_sample():
    glosses, _ = datasets.load_supersense("train")
    sentences = [s for novel in datasets.load_austen_documents(sentences=True) for s in novel]
    return tuple(_seeded_sample(glosses, DEFAULT_CALIBRATION_GLOSSES)
                 + _seeded_sample(sentences, DEFAULT_CALIBRATION_SENTENCES))


@functools.cache
def _bundled_check_sample():
    return tuple(datasets.supersense_held_out_sample(DEFAULT_HELD_OUT_GLOSSES)[0])


def _normalized(text):
    return " ".join(text.split()).casefold()


def _texts(name, texts):
    if isinstance(texts, (str, bytes)):
        raise ValueError(
            f"`{name}` must be a list of strings, not one string. Received: "
            f"{name}={texts[:40]!r}"
        )
    try:
        texts = list(texts)
    except TypeError:
        raise ValueError(f"`{name}` must be a list of strings. Received: {name}={texts!r}") from None
    for text in texts:
        if not isinstance(text, str):
            raise ValueError(
                f"`{name}` must hold strings only. Received an item {text!r} "
                f"of type {type(text).__name__}."
            )
    return texts


def calibration_and_check_texts(representative_texts=None, check_texts=None, names=None):
    """Calibration texts and the held-out check texts for full int8.

    Args:
        representative_texts: texts to calibrate on, at least
            `MIN_CALIBRATION_TEXTS` distinct non-empty ones; None for
            `default_calibration_texts()`.
        check_texts: texts to measure agreement on; those among the
            calibration texts are dropped, and at least `MIN_CHECK_TEXTS`
            must remain. None for `default_check_texts()`.
        names: how messages name the two (`ARGUMENT_NAMES`, the default,
            or `FLAG_NAMES`).

    Returns:
        `(calibration, held_out, excluded)`: two lists of strings and the
        number of check texts dropped because they were calibrated on.

    Raises:
        ValueError: before any conversion, naming the argument, the count
            given and the minimum.
    """
    (calibration_name, calibration_default), (check_name, check_default) = (
        (names or ARGUMENT_NAMES)[key] for key in ("representative_texts", "check_texts"))
    if representative_texts is None:
        calibration = default_calibration_texts()
    else:
        calibration = _texts("representative_texts", representative_texts)
        distinct = {_normalized(t) for t in calibration} - {""}
        if len(distinct) < MIN_CALIBRATION_TEXTS:
            raise ValueError(
                f"{calibration_name} holds {len(calibration)} texts "
                f"({len(distinct)} distinct and non-empty); full int8 calibrates on "
                f"at least {MIN_CALIBRATION_TEXTS} distinct texts (a few hundred like "
                f"those the model will see are best). Pass more, or {calibration_default} "
                f"for the bundled sample of {DEFAULT_CALIBRATION_GLOSSES + DEFAULT_CALIBRATION_SENTENCES} "
                "English texts."
            )
    given = default_check_texts() if check_texts is None else _texts("check_texts", check_texts)
    calibrated = {_normalized(t) for t in calibration}
    held_out = [t for t in given if _normalized(t) not in calibrated]
    if len(held_out) < MIN_CHECK_TEXTS:
        # Without calibration texts of the caller's, the overlap is with the
        # bundled sample: naming an argument they never passed would mislead.
        calibrated_in = (calibration_name if representative_texts is not None
                         else "the bundled calibration sample")
        raise ValueError(
            f"{check_name} holds {len(held_out)} texts that are not calibration "
            f"texts ({len(given)} given, {len(given) - len(held_out)} of them "
            f"also in {calibrated_in}); full int8 agreement is measured "
            f"on at least {MIN_CHECK_TEXTS} held-out texts. Pass more texts the "
            f"model was not calibrated on, or {check_default} for the bundled "
            f"{DEFAULT_HELD_OUT_GLOSSES} held-out glosses."
        )
    return calibration, held_out, len(given) - len(held_out)
