"""benchmarks/gpu_attention.py: its crossover rule on made-up timings, the
fallback log it keeps, its flags, and a tiny run on the CPU with TensorFlow
blocked (as on the device machines), which writes every field it promises."""

import importlib.util
import json
import logging
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_attention.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gpu_attention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(ms):
    return {"median_ms": ms}


def test_crossover_is_the_first_length_faster_from_there_on(bench):
    rows = {
        "1024": {"full": timed(1.0), "lsh-1": timed(2.0)},
        "2048": {"full": timed(2.0), "lsh-1": timed(1.9)},  # faster, but slower again below
        "4096": {"full": timed(4.0), "lsh-1": timed(4.5)},
        "8192": {"full": timed(9.0), "lsh-1": timed(6.0)},
        "16384": {"full": timed(30.0), "lsh-1": timed(12.0)},
    }
    found = bench.crossover(rows, "lsh-1")
    assert found["from_length"] == 8192
    assert found["faster_at"] == [2048, 8192, 16384]
    assert found["slower_at"] == [1024, 4096]
    assert found["speedup"]["16384"] == pytest.approx(2.5)


def test_crossover_counts_full_out_of_memory_and_ignores_what_was_not_measured(bench):
    rows = {
        "1024": {"full": timed(1.0), "lsh-2": timed(3.0)},
        "2048": {"full": timed(5.0), "lsh-2": timed(4.0)},
        "4096": {"full": {"error": "failed"}, "lsh-2": timed(8.0)},  # says nothing
        "8192": {"full": {"error": "out of memory"}, "lsh-2": timed(16.0)},
        "16384": {"full": {"error": "skipped"}, "lsh-2": {"error": "skipped"}},
    }
    found = bench.crossover(rows, "lsh-2")
    assert found["from_length"] == 2048
    assert found["faster_at"] == [2048, 8192]
    assert found["unknown_at"] == [4096, 16384]


def test_crossover_is_none_when_never_faster_or_slower_at_the_longest(bench):
    never = {"1024": {"full": timed(1.0), "lsh-4": timed(2.0)}}
    assert bench.crossover(never, "lsh-4")["from_length"] is None
    last_slower = {
        "1024": {"full": timed(2.0), "lsh-4": timed(1.0)},
        "2048": {"full": timed(3.0), "lsh-4": {"error": "out of memory"}},
    }
    assert bench.crossover(last_slower, "lsh-4")["from_length"] is None
    assert bench.crossover({}, "lsh-1")["from_length"] is None


def test_fallback_log_keeps_the_exception_line_of_keras_fallbacks(bench):
    from absl import logging as absl_logging

    with bench.FallbackLog() as seen:
        try:
            raise ValueError("Bias must have same seq length as QKV, got 1 and 128\nmore")
        except ValueError:
            absl_logging.exception("Failed to apply cudnn implementation of jax.nn.dot_product_attention.")
        absl_logging.warning("something else")
    assert seen.seen == [
        "Failed to apply cudnn implementation of jax.nn.dot_product_attention. "
        "ValueError: Bias must have same seq length as QKV, got 1 and 128"
    ]
    assert seen not in logging.getLogger("absl").handlers


@pytest.mark.parametrize("flags, said", [
    (["--repeats", "0"], "--repeats: must be an integer >= 1. Received: 0"),
    (["--lengths", "256", "1"], "--lengths: each length must be an integer >= 2. Received: [1]"),
    (["--max_seconds", "0"], "--max_seconds: must be > 0. Received: 0.0"),
    (["--precisions", "fp8"], "argument --precisions: invalid choice: 'fp8'"),
    (["--configs", "lsh-3"], "argument --configs: invalid choice: 'lsh-3'"),
    (["--lengths", "many"], "argument --lengths: invalid int value: 'many'"),
])
def test_bad_flags_exit_2_naming_the_flag(bench, capsys, flags, said):
    with pytest.raises(SystemExit) as exit_:
        bench.parse(flags)
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err


def run_without_tensorflow(*runs, backend="jax"):
    """The script in a process where TensorFlow cannot be imported, once
    for each list of arguments in `runs`, one after the other."""
    trampoline = (
        "import runpy, sys; import tests.tensorflow_blocked\n"
        f"for args in {list(runs)!r}:\n"
        "    sys.argv = ['benchmarks/gpu_attention.py', *args]\n"
        "    runpy.run_path('benchmarks/gpu_attention.py', run_name='__main__')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", trampoline], cwd=ROOT, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, KERAS_BACKEND=backend),
    )


@pytest.fixture(scope="module")
def runs_without_tensorflow(tmp_path_factory):
    """The time-limited run, then the tiny one, in one process (a process
    start costs more than the time-limited run). The time-limited run goes
    first, so that its time starts with the script's imports, as in a
    process of its own; runpy runs the script afresh each time."""
    folder = tmp_path_factory.mktemp("gpu_attention")
    outputs = {"limited": folder / "limited.json", "tiny": folder / "attention.json"}
    result = run_without_tensorflow(
        ["--lengths", "128", "--max_seconds", "0.001", "--output", str(outputs["limited"])],
        ["--lengths", "128", "256", "--repeats", "2", "--configs", "full", "lsh-1", "lsh-2",
         "--output", str(outputs["tiny"])],
    )
    return result, outputs


@pytest.mark.large
def test_tiny_run_on_the_cpu_records_timings_kernel_memory_and_crossover(bench, runs_without_tensorflow):
    result, outputs = runs_without_tensorflow
    output = outputs["tiny"]
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(output.read_text())
    rows = record["results"]["bf16"]
    assert sorted(rows) == ["128", "256"]
    for length in ("128", "256"):
        full = rows[length]["full"]
        assert full["median_ms"] > 0 and len(full["ms"]["values"]) == 2
        assert full["compile_s"] > 0 and full["program_memory_mib"] > 0
        # No GPU here: XLA's attention, and the probe says why not cuDNN.
        assert full["cudnn_fused_attention"] is False
        assert full["fallbacks_logged"] == []
        assert "cuDNN" in full["flash_probe_without_mask"]
        for config in ("lsh-1", "lsh-2"):
            assert rows[length][config]["median_ms"] > 0
            assert rows[length][config]["num_buckets"] >= 2
    for config in ("lsh-1", "lsh-2"):
        assert record["crossover"]["bf16"][config] == bench.crossover(rows, config)
    assert record["settings"]["precisions"] == {"bf16": "mixed_bfloat16"}
    assert record["device"]["platform"] == "cpu"
    assert record["stopped_early"] is None
    assert record["versions"]["jax"] and record["machine"]["cpu_cores"]
    assert record["command"].startswith("python benchmarks/gpu_attention.py --lengths 128 256")
    assert str(ROOT) not in output.read_text()


@pytest.mark.large
def test_time_limit_skips_what_it_cannot_finish_and_still_writes(runs_without_tensorflow):
    result, outputs = runs_without_tensorflow
    output = outputs["limited"]
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(output.read_text())
    row = record["results"]["bf16"]["128"]
    assert {entry["error"] for entry in row.values()} == {"skipped"}
    assert row["full"]["message"].startswith("--max_seconds 0.001:")
    assert record["stopped_early"] == "at 128 tokens, bf16, full"
    assert record["crossover"]["bf16"]["lsh-1"]["unknown_at"] == [128]


@pytest.mark.large
def test_refuses_other_backends():
    result = run_without_tensorflow(["--lengths", "128"], backend="torch")
    assert result.returncode == 2
    assert "run with KERAS_BACKEND=jax (this process: torch)" in result.stderr
