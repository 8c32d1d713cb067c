"""tools/plot_pretraining_stages.py: one token axis across continued runs."""

import json
import pathlib

import pytest

from tests.scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parents[2]
stages_tool = load_script("tools/plot_pretraining_stages.py")


def _curve(path, steps, mlm):
    rows = [{"step": s, "tokens": s * 10, "mlm_accuracy": m, "val_mlm_accuracy": m - 0.01,
             "sentence_embedding_cosine": 0.5} for s, m in zip(steps, mlm)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_stages_chain_on_one_token_axis(tmp_path):
    first = _curve(tmp_path / "a.jsonl", [100, 200], [0.1, 0.2])
    second = _curve(tmp_path / "b.jsonl", [50, 100, 150], [0.3, 0.4, 0.5])
    specs = [f"first={first}", "distillation (no curve)=", f"x=y second={second}@100"]
    rows, marks = stages_tool.chain_stages([stages_tool.parse_stage(s) for s in specs])
    # The second run starts where the first ended (2,000 tokens); its rows
    # after step 100 are cut; a stage without a curve adds no tokens.
    assert [row["tokens"] for row in rows] == [1000, 2000, 2500, 3000]
    assert [row["val_mlm_accuracy"] for row in rows] == pytest.approx([0.09, 0.19, 0.29, 0.39])
    assert marks == [(0, "first"), (2000, "distillation (no curve)"), (2000, "x=y second")]
    # Only masked-LM and sentence order reach the figure.
    assert "sentence_embedding_cosine" not in rows[0]


@pytest.mark.parametrize("spec, needle", [
    ("no label at all", "must be LABEL=PATH"),
    ("=a.jsonl", "must be LABEL=PATH"),
    ("run=a.jsonl@last", "STEP must be a whole number"),
])
def test_bad_stage_specs_are_refused(spec, needle):
    with pytest.raises(ValueError, match=needle):
        stages_tool.parse_stage(spec)


def test_missing_files_and_steps_are_refused(tmp_path):
    curve = _curve(tmp_path / "a.jsonl", [100, 200], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"steps \[100, 200\]"):
        stages_tool.chain_stages([("a", curve, 150)])
    with pytest.raises(ValueError, match="not a file"):
        stages_tool.chain_stages([("a", tmp_path / "missing.jsonl", None)])


def test_the_bundled_figure_ends_at_the_bundled_preset(tmp_path, monkeypatch):
    """The committed stage list ends where `albert_tiny_en` was saved: its
    last held-out point is the preset's recorded held-out accuracy, and
    the masked-LM stages add up to its recorded steps."""
    specs = stages_tool.read_stages_file(ROOT / "tools" / "progress" / "albert_tiny_en_stages.txt")
    stages = [stages_tool.parse_stage(spec) for spec in specs]
    rows, marks = stages_tool.chain_stages(
        [(label, ROOT / path if path else None, step) for label, path, step in stages])
    metrics = json.loads((ROOT / "keras_albert" / "presets" / "albert_tiny_en"
                          / "pretraining_metrics.json").read_text())
    assert rows[-1]["val_mlm_accuracy"] == pytest.approx(metrics["heldout"]["mlm_accuracy"])
    assert rows[-1]["val_sentence_order_accuracy"] == pytest.approx(
        metrics["heldout"]["sentence_order_accuracy"])
    assert rows[-1]["tokens"] == metrics["train_tokens"]
    output = tmp_path / "curve.png"
    monkeypatch.chdir(ROOT)  # the file's paths are the repository's
    assert stages_tool.main(["--stages_file", str(ROOT / "tools" / "progress" / "albert_tiny_en_stages.txt"),
                             "--output", str(output)]) == 0
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and len(marks) == len(specs)
