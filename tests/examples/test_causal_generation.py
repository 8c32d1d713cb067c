"""examples/causal_generation.py, run from README.md's block, trains a small
causal ALBERT, lowers its held-out loss, decodes the same tokens with and
without the cache, and saves a preset the generate command reads."""

import pathlib
import re
import sys

import pytest

from keras_albert.cli.main import main as cli_main
from tests.scripts import load_script
from tests.test_readme_blocks import readme_shell_block
from tests.test_readme_blocks import run_block

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_readmes_block_trains_generates_and_saves_a_preset(tmp_path, capsys):
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

    # Greedy from the command line decodes what the script's greedy did
    # (the command run in this process: its output is what is compared).
    preset = tmp_path / "runs" / "causal_preset"
    capsys.readouterr()
    status = cli_main(["generate", f"--preset={preset}", "--prompt=mr. darcy", "--max_length=24",
                       "--sampler=greedy"])
    generated = capsys.readouterr()
    assert status == 0, generated.err[-3000:]
    assert generated.out.strip() == greedy[1]


def test_an_existing_preset_directory_is_refused(tmp_path, monkeypatch, capsys):
    # The flag check, run in this process: it exits before any training.
    (tmp_path / "mine").mkdir()
    monkeypatch.setattr(sys, "argv", ["causal_generation.py", "--save_preset", str(tmp_path / "mine")])
    with pytest.raises(SystemExit) as exited:
        load_script("examples/causal_generation.py").main()
    assert exited.value.code == 2
    assert "exists; name a new directory" in capsys.readouterr().err
    assert list((tmp_path / "mine").iterdir()) == []
