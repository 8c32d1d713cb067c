"""Consistency check: every figure the READMEs quote names where it comes from.

A live check, not a unit test: it reads README.md, benchmarks/README.md and
keras_albert/presets/README.md as they are and the JSON files they cite, so a
rerun benchmark or an edited README that no longer match fail here. The
checker itself is tested on small synthetic markdown below.

The convention (benchmarks/README.md): a figure with a unit (%, a ratio
such as 2.3x, ms, s, minutes, KB/MB/MiB, GFLOP/s, texts/s, 6.7M tokens/s,
points, ...) or in
scientific notation with decimals (7.6e-06, not a setting such as 1e-5) is
followed by an HTML comment naming its source,

    70.7 %<!-- source: benchmarks/results/transfer_albert_tiny_en_12k.json#sizes.0.rows.pretrained.accuracy*100 -->

that is, a JSON file (relative to the repository: under benchmarks/results/,
a bundled preset's own record or a pretraining stage's under tools/progress/),
`#`, the dotted path of the value in it (keys may hold spaces and dots; list
indices are numbers) and an optional `*scale` (100
for a percentage, 1000 for s -> ms, 1e-6 for millions, -1 for a figure quoted as a margin
"below"). The figure must equal the scaled value rounded to the decimals it
is quoted with. A figure with no file carries `<!-- unrecorded: COMMAND -->`
naming the command that would record it (`python SCRIPT ...` or `python -m
PACKAGE ...` of this repository). A program's printed output quoted
in a fenced block is preceded by `<!-- transcript: FILE -->`: every number
with a decimal point in the block must then be a value of that file (at the
precision it is printed with).
"""

import json
import math
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
READMES = ("README.md", "benchmarks/README.md", "keras_albert/presets/README.md")
# Where a cited record may live: benchmark results, the records a bundled
# preset carries with it, or a pretraining stage's record.
RECORD_DIRECTORIES = ("benchmarks/results/", "keras_albert/presets/", "tools/progress/")

# A minus sign only after a space, a bracket or the start: in "24.9<!-- ...
# -->-41.7" or "2.3-2.9x" the hyphen joins a range.
_NUMBER = r"(?:(?<![^\s(\[])-)?(?<![\w.])\d[\d,]*(?:\.\d+)?"
_UNIT = (
    # "95 % interval" is a confidence level, not a figure.
    r"x(?!\w)|\s?%(?!\s+(?:Wilson\s+)?(?:intervals?|confidence))|M?\s(?:ms|µs|s|KB|kB|MB|MiB|GB|GiB|GFLOP/s|GFLOP|texts/s|examples/s|tokens/s|"
    r"pieces/s|minutes?|hours?|seconds?|points?)(?![\w/])"
)
# A figure that needs a source: a number with a unit, or a measurement in
# scientific notation (a mantissa with decimals: settings such as a learning
# rate of 2e-4 or a tolerance of 1e-5 are written without).
FIGURE = re.compile(rf"(?P<figure>(?<![\w.])\d\.\d+e[-+]?\d+|{_NUMBER}(?P<unit>{_UNIT}))")
SOURCED = re.compile(
    rf"(?P<figure>{_NUMBER}(?:e[-+]?\d+)?)(?:{_UNIT})?\**\s*"
    r"<!-- source: (?P<file>[^#\s]+)#(?P<key>[^*\n]+?)(?:\*(?P<scale>-?[\d.]+(?:e[-+]?\d+)?))? -->"
)
UNRECORDED = re.compile(r"<!-- unrecorded: (?P<command>[^>]+?) -->")
TRANSCRIPT = re.compile(r"<!-- transcript: (?P<file>\S+) -->\n```[^\n]*\n(?P<block>.*?)\n```", re.DOTALL)
ANY_TAG = re.compile(r"<!-- (source|unrecorded|transcript):")
TAG_AFTER = re.compile(r"\**\s*<!-- (source|unrecorded):")
# Fenced blocks in a programming language hold code, whose numbers are
# arguments, not figures.
CODE_FENCE = re.compile(r"^```(python|bash|sh|shell|make|toml|yaml|json|ini)\s*$")


def without_code_spans(text):
    """`text` without its inline code spans (where the convention is
    described, not used; a span may run over a line break, not a blank
    line), line breaks kept."""
    return re.sub(r"`(?:[^`\n]|\n(?![ \t]*\n))*`", lambda span: "``" + "\n" * span[0].count("\n"), text)


def prose_and_blocks(text):
    """(prose, untagged output blocks): `text` with its fenced blocks blanked
    (line numbers kept), and the fenced blocks that are neither code nor
    preceded by a transcript tag, as (first line, block text)."""
    prose, blocks, block, fence = [], [], None, None
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if fence is None:
                fence = line
                tagged = number > 1 and lines[number - 2].startswith("<!-- transcript:")
                block = None if CODE_FENCE.match(line) or tagged else (number, [])
            else:
                if block is not None:
                    blocks.append((block[0], "\n".join(block[1])))
                fence = None
            prose.append("")
            continue
        if fence is not None:
            if block is not None:
                block[1].append(line)
            prose.append("")
        else:
            prose.append(line)
    return "\n".join(prose), blocks


def lookup(document, key):
    """The value at dotted `key`; a dict key may itself hold dots
    ("runs/corpus/austen.txt"): the longest one that exists is taken."""
    parts, value, start = key.split("."), document, 0
    while start < len(parts):
        if isinstance(value, list):
            value, start = value[int(parts[start])], start + 1
            continue
        for end in range(len(parts), start, -1):
            if ".".join(parts[start:end]) in value:
                value, start = value[".".join(parts[start:end])], end
                break
        else:
            raise KeyError(parts[start])
    return value


def numeric_leaves(value):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from numeric_leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from numeric_leaves(item)


def decimals_of(quoted):
    mantissa = quoted.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def agrees(quoted, value):
    """Whether the figure `quoted` (as written) is `value` rounded to the
    precision it is written with."""
    quoted = quoted.replace(",", "")
    if "e" in quoted.lower():
        exponent = int(quoted.lower().split("e")[1])
        return abs(float(quoted) - value) <= 0.5 * 10 ** (exponent - decimals_of(quoted)) * 1.0001
    return abs(float(quoted) - value) <= 0.5 * 10 ** -decimals_of(quoted) + 1e-9


def read_record(root, name):
    """The JSON record `name` (relative to `root`), or a problem string."""
    if not name.startswith(RECORD_DIRECTORIES):
        return None, f"cites {name}, which is not under {' or '.join(RECORD_DIRECTORIES)}"
    path = root / name
    if not path.is_file():
        return None, f"cites {name}, which does not exist"
    return json.loads(path.read_text(encoding="utf-8")), None


def problems(text, root=ROOT):
    """Every way `text` (a README) breaks the convention, as 'line N: ...'."""
    prose, blocks = prose_and_blocks(text)
    prose = without_code_spans(prose)
    found = []

    def line_of(source, position):
        return source.count("\n", 0, position) + 1

    for match in FIGURE.finditer(prose):
        if not TAG_AFTER.match(prose, match.end()):
            found.append(f"line {line_of(prose, match.start())}: {match['figure']!r} has neither "
                         "a source tag nor an unrecorded mark")
    for first, block in blocks:
        for match in FIGURE.finditer(block):
            found.append(f"line {first + line_of(block, match.start())}: {match['figure']!r} in a "
                         "fenced block that no transcript tag names the results file of")
    for match in SOURCED.finditer(prose):
        where = f"line {line_of(prose, match.start())}"
        document, problem = read_record(root, match["file"])
        if problem:
            found.append(f"{where}: {problem}")
            continue
        try:
            value = float(lookup(document, match["key"])) * float(match["scale"] or 1)
        except (KeyError, IndexError, ValueError, TypeError):
            found.append(f"{where}: {match['file']} has no number at {match['key']!r}")
            continue
        if not agrees(match["figure"], value):
            found.append(f"{where}: quotes {match['figure']} but {match['file']}#{match['key']} "
                         f"gives {value:.{decimals_of(match['figure']) + 2}f}")
    for match in TRANSCRIPT.finditer(text):
        where = f"line {line_of(text, match.start())}"
        document, problem = read_record(root, match["file"])
        if problem:
            found.append(f"{where}: {problem}")
            continue
        values = list(numeric_leaves(document))
        for number in re.finditer(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?", match["block"]):
            candidates = (value * scale for value in values for scale in (1, 100, 1000))
            if not any(agrees(number[0], candidate) for candidate in candidates):
                found.append(f"{where}: transcript figure {number[0]} is no value of {match['file']}")
    for match in UNRECORDED.finditer(prose):
        words = match["command"].split()
        # "python SCRIPT ..." or "python -m PACKAGE ..." of this repository.
        named = words[2] if len(words) > 2 and words[1] == "-m" else words[1] if len(words) > 1 else ""
        if not ((root / named).is_file() or (words[1:2] == ["-m"] and (root / named).is_dir())):
            found.append(f"line {line_of(prose, match.start())}: unrecorded mark names "
                         f"{match['command']!r}, not a script of the repository")
    # A tag the patterns miss (a typo, a figure not right before it) would
    # otherwise go unchecked.
    understood = len(SOURCED.findall(prose)) + len(UNRECORDED.findall(prose)) + len(TRANSCRIPT.findall(text))
    tags = len(ANY_TAG.findall(prose))  # transcript tags stand in the prose, above their block
    if tags != understood:
        found.append(f"{tags - understood} tag(s) attached to no figure or block")
    return found


@pytest.mark.parametrize("readme", READMES)
def test_every_figure_names_its_source_and_agrees_with_it(readme):
    assert problems((ROOT / readme).read_text(encoding="utf-8")) == []


def test_every_cited_results_file_exists():
    """A results file a README names exists, unless the README says in the
    same paragraph (or table row) that it is not recorded yet."""
    for readme in READMES:
        paragraphs = []
        for paragraph in (ROOT / readme).read_text(encoding="utf-8").split("\n\n"):
            # A table's rows stand alone.
            paragraphs += paragraph.splitlines() if paragraph.lstrip().startswith("|") else [paragraph]
        for paragraph in paragraphs:
            if re.search(r"unrecorded|not yet recorded|predates|removed", paragraph, re.IGNORECASE):
                continue
            for name in re.findall(r"results/([\w.]+\.json)", paragraph):
                assert (ROOT / "benchmarks" / "results" / name).is_file(), f"{readme}: {name}"


# The checker on synthetic markdown.

@pytest.fixture
def records(tmp_path):
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "run.json").write_text(json.dumps(
        {"rows": [{"accuracy": 0.7071, "seconds": 0.0123, "tokens": 712345.0}], "ratio": 2.345, "gap": 1.5e-6}))
    (tmp_path / "benchmarks" / "run.py").write_text("")
    return tmp_path


TAG = "<!-- source: benchmarks/results/run.json#rows.0.accuracy*100 -->"


def test_a_tagged_figure_that_agrees_passes(records):
    text = (f"Accuracy **70.7 %**{TAG}, step 12.3 ms<!-- source: benchmarks/results/run.json"
            "#rows.0.seconds*1000 -->, 2.3x<!-- source: benchmarks/results/run.json#ratio -->, "
            "0.71M tokens/s<!-- source: benchmarks/results/run.json#rows.0.tokens*1e-6 -->.\n")
    assert problems(text, records) == []


def test_a_changed_tagged_figure_fails(records):
    assert "quotes 70.8" in " ".join(problems(f"Accuracy 70.8 %{TAG}.\n", records))


def test_a_deleted_tag_fails(records):
    found = problems("Accuracy 70.7 %.\n", records)
    assert len(found) == 1 and "'70.7 %' has neither" in found[0]


def test_units_and_scientific_notation_count_as_figures(records):
    text = "2.3-2.9x faster, 12 minutes, 635 KB, 3.8 points, 1.5e-06 apart, 659 s, 6.71M tokens/s.\n"
    figures = [line.split("'")[1] for line in problems(text, records)]
    assert figures == ["2.9x", "12 minutes", "635 KB", "3.8 points", "1.5e-06", "659 s", "6.71M tokens/s"]


def test_counts_and_settings_without_units_are_not_figures(records):
    text = ("Batch 32 x 128, 3 rounds, 4 layers, crc 90-99, Python 3.11, learning rate 2e-4, "
            "a 95 % interval.\n")
    assert problems(text, records) == []


def test_an_unrecorded_mark_must_name_a_script(records):
    assert problems("About 10 minutes<!-- unrecorded: python benchmarks/run.py -->.\n", records) == []
    found = problems("About 10 minutes<!-- unrecorded: python benchmarks/gone.py -->.\n", records)
    assert "not a script" in found[0]
    assert problems("About 10 minutes<!-- unrecorded: python -m benchmarks run -->.\n", records) == []
    assert problems("About 10 minutes<!-- unrecorded: python -m nowhere run -->.\n", records)


def test_inline_code_is_not_prose(records):
    assert problems("The flag `--max_seconds 60 s` and `0.5x`.\n", records) == []
    # A span over a line break (not over a blank line), and the line count kept.
    text = "Prints `run 20 % done,\nabout 6 min left`; then 3.0x.\n"
    assert problems(text, records) == ["line 2: '3.0x' has neither a source tag nor an unrecorded mark"]
    assert "'2.0x'" in problems("A ` tick.\n\n2.0x, `b`\n", records)[0]


def test_keys_may_hold_dots(records):
    (records / "benchmarks" / "results" / "pairs.json").write_text(
        json.dumps({"fresh": {"runs/austen.txt": {"accuracy": 0.739}}}))
    tag = "<!-- source: benchmarks/results/pairs.json#fresh.runs/austen.txt.accuracy*100 -->"
    assert problems(f"74 %{tag}\n", records) == []


def test_a_tag_with_a_missing_file_or_key_fails(records):
    assert "does not exist" in problems(
        "1.0x<!-- source: benchmarks/results/none.json#ratio -->\n", records)[0]
    assert "no number" in problems("1.0x<!-- source: benchmarks/results/run.json#nope -->\n", records)[0]
    assert "not under" in problems("1.0x<!-- source: elsewhere/run.json#ratio -->\n", records)[0]


def test_a_stray_tag_fails(records):
    assert "attached to no figure" in problems(f"See {TAG} here.\n", records)[0]


def test_output_blocks_need_a_transcript_tag_whose_file_holds_their_numbers(records):
    block = "```\nratio 2.35x, gap 1.50e-06, accuracy 70.71\n```\n"
    assert "no transcript tag" in problems(block, records)[0]
    tagged = "<!-- transcript: benchmarks/results/run.json -->\n" + block
    assert problems(tagged, records) == []
    changed = tagged.replace("2.35x", "2.45x")
    assert "transcript figure 2.45 is no value" in problems(changed, records)[0]
    stray = "<!-- transcript: benchmarks/results/run.json -->\nNo block here.\n"
    assert "attached to no figure or block" in problems(stray, records)[0]


def test_code_blocks_are_not_figures(records):
    assert problems("```python\nmodel.fit(x, epochs=3)  # 2.5x\n```\n", records) == []


def test_a_range_after_a_tag_is_not_a_negative_figure(records):
    text = (f"70.7{TAG}-70.7 %{TAG}, a margin of -2.3x<!-- source: benchmarks/results/run.json#ratio*-1 -->"
            " (-2.3 here).\n")
    assert problems(text, records) == []


def test_agreement_follows_the_quoted_precision():
    assert agrees("70.7", 70.71) and not agrees("70.7", 70.76)
    assert agrees("1,785", 1785.4) and agrees("7.6e-06", 7.62e-6) and not agrees("7.6e-06", 7.7e-6)
    assert math.isclose(float("1.5e-6"), 1.5e-6)
