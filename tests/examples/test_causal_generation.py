"""examples/causal_generation.py, run from README.md's block, trains a small
causal ALBERT, lowers its held-out loss, decodes the same tokens with and
without the cache, and saves a preset the generate command reads."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.test_readme_blocks import readme_shell_block
from tests.test_readme_blocks import run_block

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "causal_generation.py"


def run(*arguments):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *arguments], cwd=ROOT, env=dict(os.environ),
        capture_output=True, text=True, timeout=900,
    )


def test_the_readmes_block_trains_generates_and_saves_a_preset(tmp_path):
    # README.md's block as pasted, on 30 training steps: the script, then
    # `generate` with a sampler on the preset it saved.
    line, code = readme_shell_block("examples/causal_generation.py")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    out = run_block(line, code, tmp_path).stdout
    before, after = map(float, re.search(r"before ([\d.]+) after ([\d.]+)", out).groups())
    assert before == pytest.approx(8.987, abs=0.05)  # ln(8000): uniform over the vocabulary
    assert after < before - 1.0
    assert "greedy cached == uncached: True" in out
    greedy = [line[len("greedy: "):] for line in out.splitlines() if line.startswith("greedy: ")]
    assert [text.split(" ")[0] for text in greedy] == ["it", "mr.", "elizabeth"]
    assert len([line for line in out.splitlines() if line.startswith(("TopKSampler: ", "TopPSampler: "))]) == 6
    # The README's two prompts, one continuation each.
    sampled = out[out.index("saved the preset in"):].splitlines()[1:]
    assert len(sampled) == 2 and all(text.strip() for text in sampled), sampled

    # Greedy from the command line decodes what the script's greedy did.
    preset = tmp_path / "runs" / "causal_preset"
    generated = subprocess.run(
        [sys.executable, "-m", "keras_albert", "generate", f"--preset={preset}", "--prompt=mr. darcy",
         "--max_length=24", "--sampler=greedy"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert generated.returncode == 0, generated.stderr[-3000:]
    assert generated.stdout.strip() == greedy[1]


def test_an_existing_preset_directory_is_refused(tmp_path):
    (tmp_path / "mine").mkdir()
    result = run("--save_preset", str(tmp_path / "mine"))
    assert result.returncode == 2
    assert "exists; name a new directory" in result.stderr
    assert list((tmp_path / "mine").iterdir()) == []
