"""The GPU pretraining run, prepared and run here on the CPU (JAX), tiny:
a tokenized corpus continues the bundled preset within a time budget and
the preset, curve and metrics come back packed; overruns are refused."""

import io
import os
import pathlib
import subprocess
import sys
import tarfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import prepare_gpu_pretraining  # noqa: E402

from tests.conftest import synthetic_sentences  # noqa: E402


def _corpus(directory):
    directory.mkdir()
    for name, seed in (("a.txt", 0), ("b.txt", 1), ("persuasion.txt", 2)):
        lines = synthetic_sentences(400, seed=seed)
        (directory / name).write_text("\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, 400, 8)))
    return directory


def test_overruns_are_refused_saying_by_how_much(tmp_path):
    with pytest.raises(SystemExit, match=r"need about 20\.7 minutes at 3,000,000 tokens/s .* 11\.7 over the 9-minute budget: use --train_steps 17,000 or fewer"):
        prepare_gpu_pretraining.main([
            "--corpus", str(tmp_path), "--train_steps", "50000", "--batch_size", "512",
            "--expected_tokens_per_second", "3000000", "--output", str(tmp_path / "gpu"),
        ])
    assert not (tmp_path / "gpu").exists()


def test_uploads_over_64_mib_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(prepare_gpu_pretraining, "tracked_bytes", lambda: 70 * 2**20)
    with pytest.raises(SystemExit, match=r"MiB over the device's 64 MiB"):
        prepare_gpu_pretraining.main([
            "--corpus", str(_corpus(tmp_path / "corpus")), "--train_steps", "4", "--batch_size", "8",
            "--checkpoint_every", "2", "--expected_tokens_per_second", "5000",
            "--output", str(tmp_path / "gpu"), "--skip_wheels",
        ])


@pytest.mark.large
def test_prepared_run_continues_the_preset_and_packs_its_results(tmp_path):
    gpu = tmp_path / "gpu"
    prepare_gpu_pretraining.main([
        "--corpus", str(_corpus(tmp_path / "corpus")), "--train_steps", "4", "--batch_size", "8",
        "--checkpoint_every", "2", "--expected_tokens_per_second", "5000",
        "--output", str(gpu), "--skip_wheels",
    ])
    settings = (gpu / "command.sh").read_text().split(" bash ")[0]
    assert "PRESET=albert_tiny_en TRAIN_STEPS=4 BATCH_SIZE=8" in settings
    env = dict(os.environ, **dict(item.split("=") for item in settings.split()))
    env.update(SKIP_WHEELS="1", GPU_DIR=str(gpu), OUT=str(tmp_path / "out"), RUN=str(tmp_path / "run"),
               DUPE_FACTOR="1", PRECISION="float32",
               PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    result = subprocess.run(["bash", "tools/gpu_pretraining_run.sh"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    parts = sorted((tmp_path / "out").glob("run.tgz.part-*"))
    assert parts and all(part.stat().st_size <= 15 * 2**20 for part in parts)
    archive = tarfile.open(fileobj=io.BytesIO(b"".join(p.read_bytes() for p in parts)))
    names = set(archive.getnames())
    assert {"preset/config.json", "preset/model.weights.h5", "metrics.json", "curve.jsonl"} <= names
    log = (tmp_path / "out" / "log.txt").read_text()
    assert "jax backend" in log and "starting from albert_tiny_en" in log
    # `python -m keras_albert` on JAX does not start TensorFlow.
    assert "Importing keras_albert (jax)" in log and "Importing TensorFlow" not in log
