"""Compares two pytest runs of the same tests by their `-rA` summaries:
how many passed, failed or errored in each, and every test whose verdict
differs. Made for the device machine's run (JAX on a GPU, no TensorFlow)
beside the same command here (JAX on the CPU, TensorFlow blocked):

    python tools/compare_test_runs.py --reference here.log --run gpu.log \\
        [--only tests/layers tests/models ...]

Prints Markdown (counts, then one row per differing test); exit 0.
"""

import argparse
import collections
import re
import sys

VERDICT = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)")


def verdicts(path, only=()):
    """{test id: verdict} from a log's `-rA` short summary lines."""
    found = {}
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            match = VERDICT.match(line)
            if not match:
                continue
            test = match.group(2)
            if test.startswith("["):  # SKIPPED [1] file:line: reason
                continue
            if only and not test.startswith(tuple(only)):
                continue
            found[test] = match.group(1)
    return found


def differences(reference, run):
    """(test, reference verdict, run verdict) for every test they disagree on."""
    return [
        (test, reference.get(test, "-"), run.get(test, "-"))
        for test in sorted(set(reference) | set(run))
        if reference.get(test) != run.get(test)
    ]


def markdown(reference, run, reference_name, run_name):
    lines = ["| verdict | " + reference_name + " | " + run_name + " |", "|---|---|---|"]
    counts = collections.Counter(reference.values()), collections.Counter(run.values())
    for verdict in sorted(set(counts[0]) | set(counts[1])):
        lines.append(f"| {verdict} | {counts[0][verdict]} | {counts[1][verdict]} |")
    rows = differences(reference, run)
    lines += ["", f"{len(rows)} tests differ:", "", f"| test | {reference_name} | {run_name} |", "|---|---|---|"]
    lines += [f"| `{test}` | {a} | {b} |" for test, a, b in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="pytest -rA log of the reference run")
    parser.add_argument("--run", required=True, help="pytest -rA log of the run compared with it")
    parser.add_argument("--only", nargs="*", default=(), help="test id prefixes to keep")
    parser.add_argument("--names", nargs=2, default=("reference", "run"))
    args = parser.parse_args(argv)
    tables = [verdicts(path, args.only) for path in (args.reference, args.run)]
    for path, table in zip((args.reference, args.run), tables):
        if not table:
            parser.error(f"no `-rA` verdict lines in {path!r}: run pytest with -rA")
    print(markdown(*tables, *args.names))


if __name__ == "__main__":
    sys.exit(main())
