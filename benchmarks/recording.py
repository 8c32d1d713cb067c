"""What every benchmark records: the command, the date, the machine, spreads.

Each script in benchmarks/ writes its result JSON with `write_result`, under
`benchmarks/results/` unless told otherwise, so that a figure quoted in the
README can name the file it came from (tests/test_readme_figures.py checks
that the two agree).
"""

import datetime
import json
import os
import pathlib
import platform
import statistics
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MIN_ROUNDS = 3


def machine():
    """Cores and CPU of this machine (the figures depend on both)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    try:
        load = [round(value, 2) for value in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu_cores": os.cpu_count(),
        "cores_available": available,
        "cpu": model,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_1_5_15_min": load,
    }


def command(argv=None):
    """The command line that produced the result, as it was typed."""
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(os.path.abspath(argv[0]), pathlib.Path(__file__).resolve().parents[1])
    return " ".join(["python", script] + list(argv[1:]))


def spread(values):
    """Median, min, max and every value of a list of measurements."""
    values = [float(value) for value in values]
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "values": values,
    }


def show(values, scale=1.0, digits=1):
    """'median [min-max]' of `values` times `scale`."""
    s = spread(values)
    return (f"{s['median'] * scale:.{digits}f} [{s['min'] * scale:.{digits}f}-"
            f"{s['max'] * scale:.{digits}f}]")


def check_rounds(rounds, name="--rounds"):
    if rounds < MIN_ROUNDS:
        print(f"note: {name} {rounds} < {MIN_ROUNDS}: the spread is not meaningful; "
              "do not quote this run", flush=True)


def write_result(name_or_path, payload, argv=None):
    """Writes `payload` plus command, UTC date and machine; returns the path.

    `name_or_path` is a file name under benchmarks/results/ or a path.
    The file is replaced whole (a killed run leaves the previous one), which
    scripts that record row by row and resume from the file rely on.
    """
    # Imported here: the scripts' --help stays free of TensorFlow.
    from keras_albert.utils.atomic_file import write_file_atomically

    path = pathlib.Path(name_or_path)
    if path.parent == pathlib.Path("."):
        path = RESULTS / path
    record = {
        "command": command(argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
    }
    record.update(payload)
    write_file_atomically(path, json.dumps(record, indent=2) + "\n", name="output")
    print(f"wrote {path}", flush=True)
    return path
