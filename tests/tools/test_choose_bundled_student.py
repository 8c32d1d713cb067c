"""tools/choose_bundled_student.py: the rule that picks the bundled student."""

import pytest

from tests.scripts import load_script

choose_bundled_student = load_script("tools/choose_bundled_student.py")
choose = choose_bundled_student.choose


def row(name, accuracy, dynamic, full, bundled=False):
    return {"name": name, "bundled": bundled, "validation_accuracy": accuracy,
            "dynamic_agreement": dynamic, "full_int8_agreement": full}


def test_the_most_accurate_eligible_candidate_is_chosen():
    rows = [row("bundled", 0.70, 1.0, 1.0, bundled=True), row("a", 0.78, 0.99, 1.0),
            row("b", 0.77, 0.995, 0.99), row("c", 0.76, 1.0, 1.0)]
    assert choose(rows) == "b"
    # "a" is below the dynamic-range bar even though it clears the exporter's gate.
    assert [r["eligible"] for r in rows] == [True, False, True, True]


def test_full_int8_below_its_bar_is_not_eligible():
    rows = [row("bundled", 0.70, 1.0, 1.0, bundled=True), row("a", 0.78, 1.0, 0.989)]
    assert choose(rows) == "bundled"


def test_the_bundled_student_stays_when_nothing_is_eligible():
    rows = [row("a", 0.78, 0.9, 0.9), row("bundled", 0.70, 0.9, 0.9, bundled=True)]
    assert choose(rows) == "bundled"


def test_ties_go_to_the_bundled_student_then_to_the_earlier_candidate():
    assert choose([row("a", 0.75, 1.0, 1.0), row("bundled", 0.75, 1.0, 1.0, bundled=True)]) == "bundled"
    assert choose([row("bundled", 0.70, 1.0, 1.0, bundled=True), row("a", 0.75, 1.0, 1.0),
                   row("b", 0.75, 1.0, 1.0)]) == "a"


def test_a_candidate_that_is_not_a_preset_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        choose_bundled_student.parse_args(["--candidates", str(tmp_path)])
    assert "is not a preset directory" in capsys.readouterr().err
