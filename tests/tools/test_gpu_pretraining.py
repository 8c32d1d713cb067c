"""The GPU pretraining run, prepared and run here on the CPU (JAX), tiny:
a tokenized corpus continues the bundled preset, or new weights of a config
start, with the masked-LM or the causal-LM objective, within a time budget;
the preset, curve, metrics and plan come back packed. What cannot work is
refused before any GPU time, saying why."""

import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import prepare_gpu_pretraining  # noqa: E402

from tests.conftest import synthetic_sentences  # noqa: E402

# A few steps of 8: what every prepared test run trains.
SMALL_RUN = ["--train_steps", "4", "--batch_size", "8", "--checkpoint_every", "2",
             "--expected_tokens_per_second", "5000", "--skip_wheels"]


def _corpus(directory):
    directory.mkdir()
    for name, seed in (("a.txt", 0), ("b.txt", 1), ("persuasion.txt", 2)):
        lines = synthetic_sentences(400, seed=seed)
        (directory / name).write_text("\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, 400, 8)))
    return directory


def _config(tmp_path, text):
    path = tmp_path / "config.json"
    path.write_text(text if isinstance(text, str) else json.dumps(text))
    return str(path)


def _refused(tmp_path, *argv):
    """The refusal's message; nothing was written."""
    with pytest.raises(SystemExit) as refusal:
        prepare_gpu_pretraining.main([
            "--corpus", str(tmp_path / "corpus"), "--name", "test_run",
            "--output", str(tmp_path / "gpu"), *SMALL_RUN, *argv,
        ])
    assert not (tmp_path / "gpu").exists()
    return str(refusal.value)


def test_overruns_are_refused_saying_by_how_much(tmp_path):
    with pytest.raises(SystemExit, match=r"need about 20\.7 minutes at 3,000,000 tokens/s .* 11\.7 over the 9-minute budget: use --train_steps 17,000 or fewer"):
        prepare_gpu_pretraining.main([
            "--corpus", str(tmp_path), "--name", "test_run", "--train_steps", "50000", "--batch_size", "512",
            "--expected_tokens_per_second", "3000000", "--output", str(tmp_path / "gpu"),
        ])
    assert not (tmp_path / "gpu").exists()


def test_uploads_over_64_mib_are_refused_saying_by_how_much(tmp_path, monkeypatch):
    monkeypatch.setattr(prepare_gpu_pretraining, "travelling_files", lambda: set())
    real_upload = prepare_gpu_pretraining.upload_bytes
    monkeypatch.setattr(prepare_gpu_pretraining, "upload_bytes",
                        lambda output: (70 * 2**20, real_upload(output)[1]))
    with pytest.raises(SystemExit, match=r"upload would be 70\.\d MiB \(tree 70\.0 \+ gpu 0\.\d\), 6\.\d MiB over the device's 64 MiB"):
        prepare_gpu_pretraining.main([
            "--corpus", str(_corpus(tmp_path / "corpus")), "--name", "test_run",
            "--output", str(tmp_path / "gpu"), *SMALL_RUN,
        ])


def test_the_upload_counts_the_carried_folder_once(tmp_path, monkeypatch):
    carried = tmp_path / "gpu"
    (carried / "corpus").mkdir(parents=True)
    (carried / "corpus" / "train.npz").write_bytes(b"x" * 1000)
    (carried / "command.sh").write_bytes(b"y" * 24)
    monkeypatch.setattr(prepare_gpu_pretraining, "travelling_files",
                        lambda: {(carried / "command.sh").resolve()})
    assert prepare_gpu_pretraining.upload_bytes(carried) == (24, 1000)


def test_unknown_objectives_are_refused(tmp_path, capsys):
    assert _refused(tmp_path, "--objective", "clm") == "2"
    assert "argument --objective: invalid choice: 'clm'" in capsys.readouterr().err


def test_the_run_script_refuses_an_unknown_objective_before_installing(tmp_path):
    env = dict(os.environ, NAME="x", OBJECTIVE="clm", TRAIN_STEPS="4", BATCH_SIZE="8", TIME_BUDGET_MINUTES="9",
               PRESET="albert_tiny_en", OUT=str(tmp_path / "out"), GPU_DIR=str(tmp_path / "missing"))
    result = subprocess.run(["bash", "tools/gpu_pretraining_run.sh"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr == "error: OBJECTIVE=clm: expected mlm or causal_lm\n"
    assert not (tmp_path / "out").exists()


def test_configs_that_are_not_json_are_refused(tmp_path):
    message = _refused(tmp_path, "--config", _config(tmp_path, '{"num_layers": 2,}'))
    assert "config.json' is not valid JSON: Expecting property name" in message and "line 1 column 18" in message


def test_configs_with_unknown_arguments_are_refused_naming_them(tmp_path):
    message = _refused(tmp_path, "--config", _config(tmp_path, {"num_layers": 2, "hidden": 64, "layers": 2}))
    assert "names arguments AlbertBackbone does not take: hidden, layers (it takes " in message
    assert "hidden_dim" in message


def test_configs_the_run_cannot_use_are_refused(tmp_path, tiny_backbone_config):
    message = _refused(tmp_path, "--config", _config(tmp_path, tiny_backbone_config))
    assert "sets vocabulary_size=120, but the corpus is tokenized with the 8,000-piece vocabulary of --preset 'albert_tiny_en'" in message
    shape = {k: v for k, v in tiny_backbone_config.items() if k != "vocabulary_size"}
    message = _refused(tmp_path, "--config", _config(tmp_path, shape))
    assert "sets max_sequence_length=32, shorter than --max_seq_length 128" in message
    del shape["max_sequence_length"]
    message = _refused(tmp_path, "--config", _config(tmp_path, {**shape, "causal": True}))
    assert "sets causal=true, which a masked LM cannot use" in message
    message = _refused(tmp_path, "--config", _config(tmp_path, {**shape, "num_heads": 3}))
    assert message.startswith("error: --config ") and "num_heads" in message


def test_presets_that_would_not_travel_and_used_names_are_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "keras_albert" / "presets" / "albert_tiny_en", outside / "preset")
    message = _refused(tmp_path, "--preset", str(outside))
    assert "lies outside the repository" in message and "only the tree travels" in message
    assert "is neither a bundled preset" in _refused(tmp_path, "--preset", str(tmp_path))
    used = sorted(path.name for path in prepare_gpu_pretraining.PROGRESS.iterdir() if path.is_dir())[0]
    with pytest.raises(SystemExit):
        prepare_gpu_pretraining.main(["--corpus", str(tmp_path), "--name", used, *SMALL_RUN])


def test_a_previous_runs_folder_is_continued_from_its_preset(tmp_path, monkeypatch):
    """--preset names the folder a run's archive was unpacked to; the command
    continues its preset/ by its path in the tree, and a masked-LM run does
    not continue a causal LM."""
    monkeypatch.setattr(prepare_gpu_pretraining, "ROOT", tmp_path)
    monkeypatch.setattr(prepare_gpu_pretraining, "travelling_files", lambda: set())
    bundled = ROOT / "keras_albert" / "presets" / "albert_tiny_en"
    shutil.copytree(bundled, tmp_path / "progress" / "tiny_v1" / "preset")
    prepare_gpu_pretraining.main([
        "--corpus", str(_corpus(tmp_path / "corpus")), "--name", "tiny_v2", "--output", str(tmp_path / "gpu"),
        "--preset", str(tmp_path / "progress" / "tiny_v1"), *SMALL_RUN,
    ])
    assert "NAME=tiny_v2 OBJECTIVE=mlm PRESET=progress/tiny_v1/preset " in (tmp_path / "gpu" / "command.sh").read_text()
    assert json.loads((tmp_path / "gpu" / "plan.json").read_text())["start"] == "progress/tiny_v1/preset"
    causal = tmp_path / "progress" / "causal_v1" / "preset"
    shutil.copytree(bundled, causal)
    (causal / "task.json").write_text('{"class_name": "AlbertCausalLM"}')
    shutil.rmtree(tmp_path / "gpu")
    message = _refused(tmp_path, "--preset", str(causal.parent))
    assert "is a causal LM; a masked-LM run continues a bidirectional preset" in message


def test_the_committed_configs_are_valid(tmp_path):
    """tools/configs/ pass the checks and build (the shapes the report and
    tools/configs/README.md state)."""
    counts = {}
    for name, objective in (("albert_small_en", "mlm"), ("albert_tiny_causal_en", "causal_lm")):
        args = prepare_gpu_pretraining.parse([
            "--corpus", str(tmp_path), "--name", "test_run", "--objective", objective,
            "--config", str(ROOT / "tools" / "configs" / f"{name}.json"), *SMALL_RUN,
        ])
        config, counts[name] = prepare_gpu_pretraining.read_config(args, 8000)
        assert config["vocabulary_size"] == 8000 and config["max_sequence_length"] == 128
        assert config.get("causal", False) is (objective == "causal_lm")
    # Backbone parameters with the pooler; float32 weights: 17.2 and 7.4 MiB.
    assert counts == {"albert_small_en": 4_521_984, "albert_tiny_causal_en": 1_929_472}


def _prepare_and_run(tmp_path, *argv, runs=1):
    """Prepares into tmp_path/gpu and runs the command it wrote, as the
    device would (tiny, float32, no wheels); returns (settings, logs, the
    archive's members)."""
    gpu = tmp_path / "gpu"
    prepare_gpu_pretraining.main([
        "--corpus", str(_corpus(tmp_path / "corpus")), "--output", str(gpu), *SMALL_RUN, *argv,
    ])
    settings = (gpu / "command.sh").read_text().split(" bash ")[0]
    env = dict(os.environ, **dict(item.split("=") for item in settings.split()))
    env.update(SKIP_WHEELS="1", GPU_DIR=str(gpu), OUT=str(tmp_path / "out"), RUN=str(tmp_path / "run"),
               PRECISION="float32",
               PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    if "DUPE_FACTOR" in env:
        env["DUPE_FACTOR"] = "1"
    logs = []
    for _ in range(runs):
        result = subprocess.run(["bash", "tools/gpu_pretraining_run.sh"], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        logs.append((tmp_path / "out" / "log.txt").read_text())
    parts = sorted((tmp_path / "out").glob("run.tgz.part-*"))
    assert parts and all(part.stat().st_size <= 15 * 2**20 for part in parts)
    archive = tarfile.open(fileobj=io.BytesIO(b"".join(p.read_bytes() for p in parts)))
    members = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}
    return settings, logs, members


def _assert_jax_without_tensorflow(log):
    assert "jax backend" in log
    # `python -m keras_albert` on JAX does not start TensorFlow.
    assert "Importing keras_albert (jax)" in log and "Importing TensorFlow" not in log


@pytest.mark.large
def test_prepared_run_continues_the_preset_and_packs_its_results(tmp_path):
    settings, (log,), members = _prepare_and_run(tmp_path, "--name", "tiny_continued")
    assert "NAME=tiny_continued OBJECTIVE=mlm PRESET=albert_tiny_en TRAIN_STEPS=4 BATCH_SIZE=8" in settings
    assert {"preset/config.json", "preset/model.weights.h5", "metrics.json", "curve.jsonl", "plan.json"} <= set(members)
    assert json.loads(members["plan.json"])["start"] == "albert_tiny_en"
    assert "starting from albert_tiny_en" in log
    _assert_jax_without_tensorflow(log)


@pytest.mark.large
def test_prepared_run_from_a_config_trains_new_weights_with_the_presets_vocabulary(tmp_path):
    """Masked LM from scratch; the same command run again resumes the run
    (a warm machine) instead of starting over."""
    shape = dict(num_layers=2, num_heads=2, embedding_dim=16, hidden_dim=32, intermediate_dim=64)
    settings, logs, members = _prepare_and_run(
        tmp_path, "--name", "tiny_new", "--config", _config(tmp_path, shape), runs=2,
    )
    assert "NAME=tiny_new OBJECTIVE=mlm FROM_CONFIG=1 TRAIN_STEPS=4" in settings and "PRESET" not in settings
    config = json.loads(members["preset/config.json"])["config"]
    assert {k: config[k] for k in shape} == shape and config["vocabulary_size"] == 8000
    bundled = ROOT / "keras_albert" / "presets" / "albert_tiny_en" / "assets" / "tokenizer" / "vocabulary.spm"
    assert members["preset/assets/tokenizer/vocabulary.spm"] == bundled.read_bytes()
    assert "vocabulary: reusing" in logs[0] and "starting from" not in logs[0]
    assert "training: resumed" not in logs[0]
    assert "training: resumed at step 4" in logs[1] and "preset written" in logs[1]
    metrics = json.loads(members["metrics.json"])
    assert metrics["train_steps"] == 4 and 0 <= metrics["heldout"]["mlm_accuracy"] <= 1
    assert json.loads(members["plan.json"])["backbone_parameters"] > 0
    _assert_jax_without_tensorflow(logs[0])


@pytest.mark.large
def test_prepared_causal_lm_run_from_the_tiny_causal_config(tmp_path):
    settings, (log,), members = _prepare_and_run(
        tmp_path, "--name", "tiny_causal", "--objective", "causal_lm",
        "--config", str(ROOT / "tools" / "configs" / "albert_tiny_causal_en.json"),
    )
    assert "OBJECTIVE=causal_lm FROM_CONFIG=1" in settings and "DUPE_FACTOR" not in settings
    assert "AlbertCausalLM" in members["preset/task.json"].decode()
    assert json.loads(members["preset/config.json"])["config"]["causal"] is True
    metrics = json.loads(members["metrics.json"])
    assert metrics["objective"] == "causal_lm" and metrics["heldout"]["tokens"] > 0
    assert 1 < metrics["heldout"]["perplexity"] < 2 * 8000  # new weights: about the vocabulary's size
    curve = [json.loads(line) for line in members["curve.jsonl"].decode().splitlines()]
    assert [row["tokens"] for row in curve] == [2 * 8 * 128, 4 * 8 * 128]
    assert "heldout_loss_per_token" in curve[-1]
    _assert_jax_without_tensorflow(log)
