"""Consistency check: the figures the READMEs quote agree with their result files.

A live check, not a unit test: it reads README.md and benchmarks/README.md
as they are and the JSON files they cite, so a rerun benchmark or an edited
README that no longer match fail here.

The convention (benchmarks/README.md): a quoted figure is followed by an
HTML comment naming its source,

    70.7 %<!-- source: benchmarks/results/transfer_albert_tiny_en_12k.json#sizes.0.rows.pretrained.accuracy*100 -->

that is, a JSON file (relative to the repository: under benchmarks/results/,
or a bundled preset's own record), `#`, the dotted path of the value in it
(keys may hold spaces) (list indices are numbers) and an optional `*scale` (100
for a percentage, 1000 for s -> ms, -1 for a figure quoted as a margin
"below"). The figure must equal the scaled value rounded to the decimals it
is quoted with. A figure with no file carries `<!-- unrecorded: COMMAND -->`
naming the command that would record it.
"""

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
READMES = ("README.md", "benchmarks/README.md")

SOURCED = re.compile(
    r"(?P<figure>-?\d[\d,]*(?:\.\d+)?)\s*(?:%|x|ms|MiB|GFLOP/s|s)?\**\s*"
    r"<!-- source: (?P<file>[^#\s]+)#(?P<key>[^*\n]+?)(?:\*(?P<scale>-?[\d.]+))? -->"
)
UNRECORDED = re.compile(r"<!-- unrecorded: (?P<command>[^>]+?) -->")
ANY_TAG = re.compile(r"<!-- (source|unrecorded):")


def readme_text(readme):
    """The README without its inline code spans (where the convention is
    described, not used)."""
    return re.sub(r"`[^`\n]*`", "``", (ROOT / readme).read_text(encoding="utf-8"))


def tagged_figures():
    for readme in READMES:
        text = readme_text(readme)
        for match in SOURCED.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield pytest.param(readme, match, id=f"{readme}:{line}:{match['figure']}")


def lookup(document, key):
    value = document
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@pytest.mark.parametrize("readme, match", list(tagged_figures()))
def test_quoted_figure_equals_its_result_file(readme, match):
    path = ROOT / match["file"]
    assert path.is_file(), f"{readme} cites {match['file']}, which does not exist"
    # Benchmark records, or the records a bundled preset carries with it.
    assert match["file"].startswith(("benchmarks/results/", "keras_albert/presets/")), match["file"]
    value = float(lookup(json.loads(path.read_text()), match["key"])) * float(match["scale"] or 1)
    quoted = match["figure"].replace(",", "")
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    assert abs(float(quoted) - value) <= 0.5 * 10**-decimals + 1e-9, (
        f"{readme} quotes {match['figure']} but {match['file']}#{match['key']} gives "
        f"{value:.{decimals + 2}f}"
    )


def test_every_tag_is_well_formed_and_names_something_real():
    sourced = unrecorded = 0
    for readme in READMES:
        text = readme_text(readme)
        tags = len(ANY_TAG.findall(text))
        found_sourced = len(SOURCED.findall(text))
        found_unrecorded = UNRECORDED.findall(text)
        # A tag the patterns miss (a typo, a figure not right before it)
        # would otherwise go unchecked.
        assert tags == found_sourced + len(found_unrecorded), readme
        for command in found_unrecorded:
            script = command.split()[1]
            assert (ROOT / script).is_file(), f"{readme}: unrecorded figure names {command!r}"
        sourced += found_sourced
        unrecorded += len(found_unrecorded)
    assert sourced >= 40, sourced  # the README's recorded figures are tagged


def test_every_cited_results_file_exists():
    """A results file a README names exists, unless the README says in the
    same paragraph (or table row) that it is not recorded yet."""
    for readme in READMES:
        paragraphs = []
        for paragraph in (ROOT / readme).read_text(encoding="utf-8").split("\n\n"):
            # A table's rows stand alone.
            paragraphs += paragraph.splitlines() if paragraph.lstrip().startswith("|") else [paragraph]
        for paragraph in paragraphs:
            if re.search(r"unrecorded|not yet recorded|predates", paragraph, re.IGNORECASE):
                continue
            for name in re.findall(r"results/([\w.]+\.json)", paragraph):
                assert (ROOT / "benchmarks" / "results" / name).is_file(), f"{readme}: {name}"
