"""tools/causal_quality_seed.sh refuses to start without a seed or without
the prepared corpus, saying which (a run itself takes about 50 minutes:
benchmarks/results/causal_quality_seed1.json is one)."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "causal_quality_seed.sh"


def test_a_seed_is_required():
    result = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "seed" in result.stderr


def test_the_prepared_corpus_is_required(tmp_path):
    result = subprocess.run(["bash", str(SCRIPT), "2"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "runs/causal_cpu_prep/corpus/train.npz missing" in result.stderr
    assert not (tmp_path / "runs").exists()  # nothing started
