"""What every benchmark records: the command, the date, the machine, the
thread count, the library versions, spreads.

Each script in benchmarks/ writes its result JSON with `write_result`, under
`benchmarks/results/` unless told otherwise, so that a figure quoted in the
README can name the file it came from (tests/test_readme_figures.py checks
that the two agree).
"""

import datetime
import importlib.metadata
import json
import os
import pathlib
import platform
import re
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MIN_ROUNDS = 3
# The libraries whose version moves a figure (installed ones are recorded).
LIBRARIES = ("keras", "tensorflow", "keras-hub", "jax", "jaxlib", "torch",
             "transformers", "numpy", "scikit-learn", "ai-edge-litert")


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


def versions():
    """The installed version of each library in LIBRARIES (read from the
    installed metadata: nothing is imported)."""
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def threads_in_process():
    """The thread counts this process computes with: TensorFlow's and torch's
    when they are imported (TensorFlow's 0 means one per available core),
    else the cores available."""
    counts = {}
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        counts["tensorflow_intra_op"] = (
            tf.config.threading.get_intra_op_parallelism_threads() or machine()["cores_available"])
        counts["tensorflow_inter_op"] = tf.config.threading.get_inter_op_parallelism_threads()
    torch = sys.modules.get("torch")
    if torch is not None:
        counts["torch"] = torch.get_num_threads()
    return counts or {"cores_available": machine()["cores_available"]}


def relative_to_repository(value):
    """`value` with the repository's absolute path made relative, in every
    string it holds: a record names no directory of the machine it ran on."""
    if isinstance(value, str):
        # The root followed by a separator, or standing alone (not /work/main2).
        return re.sub(re.escape(str(ROOT)) + r"(/|(?![\w.-]))",
                      lambda match: "" if match.group(1) else ".", value)
    if isinstance(value, dict):
        return {key: relative_to_repository(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [relative_to_repository(item) for item in value]
    return value


def command(argv=None):
    """The command line that produced the result, as it was typed."""
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(os.path.abspath(argv[0]), ROOT)
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


def mean_sd(values, count_key="seeds"):
    """Mean and sample standard deviation (None for one value), rounded to
    4 places, with how many values under `count_key`: a figure over seeds."""
    values = [float(v) for v in values]
    return {"mean": round(statistics.fmean(values), 4),
            "sd": round(statistics.stdev(values), 4) if len(values) > 1 else None,
            count_key: len(values)}


def show(values, scale=1.0, digits=1):
    """'median [min-max]' of `values` times `scale`."""
    s = spread(values)
    return (f"{s['median'] * scale:.{digits}f} [{s['min'] * scale:.{digits}f}-"
            f"{s['max'] * scale:.{digits}f}]")


def check_rounds(rounds, name="--rounds"):
    if rounds < MIN_ROUNDS:
        print(f"note: {name} {rounds} < {MIN_ROUNDS}: the spread is not meaningful; "
              "do not quote this run", flush=True)


def busy_machine_note(machine_record):
    """A note when the 1-minute load average exceeded the available cores
    by more than one (other work shared the CPU: a timing taken under a
    seed run's load once halved a speed-up), else None."""
    load, cores = machine_record.get("load_average_1_5_15_min"), machine_record.get("cores_available")
    if not load or not cores or load[0] <= cores + 1:
        return None
    return (f"note: the 1-minute load average was {load[0]} on {cores} cores: other work "
            "shared the machine; rerun before quoting this file's timings")


def write_result(name_or_path, payload, argv=None, threads=None):
    """Writes `payload` plus command, UTC date, machine, thread count and
    library versions; returns the path.

    `name_or_path` is a file name under benchmarks/results/ or a path.
    `threads`: the thread count the measured work ran with where it ran in
    other processes (default: this process's, `threads_in_process`); a
    payload's own "threads" wins. Paths inside the repository are written
    relative to it.
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
        "threads": threads if threads is not None else threads_in_process(),
        "versions": versions(),
    }
    record.update(relative_to_repository(payload))
    busy = busy_machine_note(record["machine"])
    if busy:
        print(busy, flush=True)
    write_file_atomically(path, json.dumps(record, indent=2) + "\n", name="output")
    print(f"wrote {path}", flush=True)
    return path
