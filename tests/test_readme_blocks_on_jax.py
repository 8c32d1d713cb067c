"""The README's Python blocks that do not use TensorFlow run on JAX without it.

The README says the models, tasks, conversions and the `Distiller` run on
every backend; `test_readme_blocks.py` runs the blocks on TensorFlow only.
Here every block that imports no TensorFlow package and reads no TFLite
file runs, shortened the same way, in one JAX process where TensorFlow is
unimportable, each in a fresh namespace and folder.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.test_readme_blocks import REPLACEMENTS
from tests.test_readme_blocks import ROOT
from tests.test_readme_blocks import code_blocks
from tests.test_readme_blocks import shortened

TENSORFLOW_ONLY = ("import tensorflow", "tensorflow_text", "tf.", ".tflite", "mediapipe", "ai_edge_litert")

RUNNER = textwrap.dedent("""
    import json, os, sys, traceback
    for name in ("tensorflow", "tensorflow_text", "tf_keras"):
        sys.modules[name] = None
    blocks = json.load(open(sys.argv[1]))
    failures = {}
    for line, code in blocks:
        folder = os.path.join(sys.argv[2], str(line))
        os.makedirs(folder)
        os.chdir(folder)
        if "runs/teacher/preset" in code:
            import keras_albert
            keras_albert.AlbertClassifier.from_preset("albert_tiny_en", num_classes=26).save_to_preset(
                "runs/teacher/preset")
        try:
            exec(compile(code, f"<README.md:{line}>", "exec"), {"__name__": "__readme__"})
        except Exception:
            failures[line] = traceback.format_exc(limit=-3)
    print("FAILURES=" + json.dumps(failures))
""")


def backend_neutral_blocks():
    return [
        (line, shortened(code, REPLACEMENTS))
        for language, line, code in code_blocks(ROOT / "README.md")
        if language == "python" and not any(marker in code for marker in TENSORFLOW_ONLY)
    ]


def test_the_blocks_chosen_include_the_use_and_distill_examples():
    chosen = " ".join(code for _, code in backend_neutral_blocks())
    assert len(backend_neutral_blocks()) >= 6
    for name in ("AlbertClassifier.from_preset", "to_keras_hub_preset", "Distiller(", "AlbertCausalLM"):
        assert name in chosen


@pytest.mark.large
def test_backend_neutral_blocks_run_on_jax_without_tensorflow(tmp_path):
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps(backend_neutral_blocks()))
    env = dict(os.environ, KERAS_BACKEND="jax", PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(blocks), str(tmp_path / "runs")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    failures = json.loads(result.stdout.rsplit("FAILURES=", 1)[1])
    assert not failures, "\n".join(f"README.md:{line}\n{trace}" for line, trace in failures.items())
