"""Full int8's texts: a calibration sample, and held-out texts to check on."""

import pytest

from keras_albert.export.int8_calibration import FLAG_NAMES
from keras_albert.export.int8_calibration import MIN_CALIBRATION_TEXTS
from keras_albert.export.int8_calibration import MIN_CHECK_TEXTS
from keras_albert.export.int8_calibration import calibration_and_check_texts
from keras_albert.export.int8_calibration import default_calibration_texts
from keras_albert.export.int8_calibration import default_check_texts
from tests.conftest import synthetic_sentences

CALIBRATION = sorted(set(synthetic_sentences(140, seed=3)))[:120]
OTHERS = [t for t in dict.fromkeys(synthetic_sentences(300, seed=11)) if t not in CALIBRATION]


def _key(text):
    return " ".join(text.split()).lower()


def test_defaults_are_fixed_real_and_never_overlap():
    calibration = default_calibration_texts()
    assert len(calibration) == 300 and calibration == default_calibration_texts()
    assert len({_key(t) for t in calibration}) == 300
    # Short glosses and long novel sentences both.
    lengths = sorted(len(t.split()) for t in calibration)
    assert lengths[0] <= 4 and lengths[-1] >= 40
    check = default_check_texts()
    assert len(check) == 200 and not {_key(t) for t in check} & {_key(t) for t in calibration}
    chosen, held_out, excluded = calibration_and_check_texts()
    assert (chosen, held_out, excluded) == (calibration, check, 0)


def test_check_texts_that_were_calibrated_on_are_left_out():
    # Case and spacing do not hide a calibration text (the tokenizer
    # lowercases and collapses whitespace).
    repeats = CALIBRATION[:30] + ["  " + t.upper().replace(" ", "   ") for t in CALIBRATION[30:60]]
    chosen, held_out, excluded = calibration_and_check_texts(CALIBRATION, repeats + OTHERS[:110])
    assert chosen == CALIBRATION
    assert held_out == OTHERS[:110] and excluded == 60


@pytest.mark.parametrize(
    "texts, needles",
    [
        (CALIBRATION[:MIN_CALIBRATION_TEXTS - 1], ["`representative_texts` holds 99 texts", "at least 100"]),
        ([CALIBRATION[0]] * 150, ["holds 150 texts (1 distinct and non-empty)", "at least 100"]),
        (["", "  "] * 100 + CALIBRATION[:10], ["holds 210 texts (10 distinct and non-empty)"]),
        ("one long string, not a list", ["`representative_texts` must be a list of strings, not one string"]),
        (CALIBRATION[:100] + [b"bytes"], ["`representative_texts` must hold strings only", "b'bytes'", "bytes"]),
        (42, ["`representative_texts` must be a list of strings", "42"]),
    ],
)
def test_too_few_or_bad_calibration_texts_are_refused(texts, needles):
    with pytest.raises(ValueError) as error:
        calibration_and_check_texts(texts, OTHERS[:150])
    missing = [n for n in needles if n not in str(error.value)]
    assert not missing, f"{missing} not in: {error.value}"


def test_too_few_held_out_check_texts_are_refused():
    check = CALIBRATION[:100] + OTHERS[: MIN_CHECK_TEXTS - 1]
    with pytest.raises(ValueError) as error:
        calibration_and_check_texts(CALIBRATION, check)
    message = str(error.value)
    for needle in ("`check_texts` holds 99 texts that are not calibration texts",
                   "199 given, 100 of them also in `representative_texts`", "at least 100"):
        assert needle in message
    with pytest.raises(ValueError, match="`check_texts` must hold strings only"):
        calibration_and_check_texts(CALIBRATION, OTHERS[:120] + [None])
    # The export command names its flags instead.
    with pytest.raises(ValueError) as error:
        calibration_and_check_texts(CALIBRATION, check, names=FLAG_NAMES)
    message = str(error.value)
    for needle in ("`--texts` holds 99 texts", "also in `--calibration_texts`", "or leave --texts out"):
        assert needle in message
    # Without calibration texts, the overlap named is the bundled sample's,
    # not an argument the caller never passed.
    bundled = default_calibration_texts()
    with pytest.raises(ValueError) as error:
        calibration_and_check_texts(None, bundled[:3] + OTHERS[:MIN_CHECK_TEXTS - 1], names=FLAG_NAMES)
    message = str(error.value)
    assert "3 of them also in the bundled calibration sample" in message
    assert "--calibration_texts" not in message


def test_default_check_texts_span_the_supersenses():
    # The validation split is ordered by supersense: its first 200 glosses
    # hold two, which would grade int8 on a narrow slice of the task.
    from keras_albert import datasets

    texts, labels = datasets.load_supersense("validation", pos="n")
    label_of = dict(zip(texts, labels))
    assert len({label_of[t] for t in default_check_texts()}) >= 20
