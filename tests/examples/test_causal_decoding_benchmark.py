"""benchmarks/causal_decoding.py times every row, checks cached and
uncached tokens agree and records what the README's rules ask (tiny, on the
CPU)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = ["--new_tokens", "4", "--prompt_length", "3", "--num_layers", "2", "--hidden_dim", "16",
        "--embedding_dim", "8", "--num_heads", "2", "--intermediate_dim", "32",
        "--vocabulary_size", "50", "--rounds", "3"]


def run(*arguments):
    return subprocess.run(
        [sys.executable, "benchmarks/causal_decoding.py", *arguments],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=900,
    )


def test_bad_sizes_are_refused_before_any_model_is_built(tmp_path):
    result = run("--new_tokens", "0", "--output", str(tmp_path / "x.json"))
    assert result.returncode == 2 and "--new_tokens must be a positive integer; got 0" in result.stderr
    assert not (tmp_path / "x.json").exists()


def test_records_every_row_and_ratio_compiling_each_model_once(tmp_path, monkeypatch):
    # One run in this process checks both the record and the compiling
    # (each was a run of its own). Compiling again drops the generate
    # functions traced by the untimed first calls, and the first timed
    # round would pay for tracing.
    import keras_hub

    import keras_albert

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    sys.modules.pop("causal_decoding", None)
    import causal_decoding

    compiled = []
    for cls in (keras_albert.AlbertCausalLM, keras_hub.models.GPT2CausalLM):
        original = cls.compile

        def counting(self, *args, _original=original, **kwargs):
            compiled.append(id(self))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "compile", counting)
    build_models = causal_decoding.build_models

    def built_then_counted(*args):
        models = build_models(*args)
        compiled.clear()  # keras-hub's tasks compile once when built
        return models

    monkeypatch.setattr(causal_decoding, "build_models", built_then_counted)
    output = tmp_path / "decoding.json"
    # The command line as the process would see it: the record's command
    # is read from sys.argv.
    monkeypatch.setattr(sys, "argv", [str(ROOT / "benchmarks" / "causal_decoding.py"), *TINY,
                                      "--output", str(output)])
    causal_decoding.main()
    assert len(compiled) == 3 and len(set(compiled)) == 3

    record = json.loads(output.read_text())
    assert set(record["rows"]) == {
        "albert_shared_cached", "albert_shared_uncached", "albert_gpt2_layout_cached", "keras_hub_gpt2_cached",
    }
    for row in record["rows"].values():
        assert len(row["seconds"]["values"]) == 3 and row["seconds"]["median"] > 0
    # One shared block: fewer weights than the unshared layouts.
    rows = record["rows"]
    assert rows["albert_shared_cached"]["parameters"] < rows["albert_gpt2_layout_cached"]["parameters"]
    assert record["cached_equals_uncached_tokens"] is True
    assert all(value > 0 for value in record["ratios"].values())
    assert record["backend"] == "tensorflow" and record["versions"]["keras-hub"]
    assert record["command"].startswith("python benchmarks/causal_decoding.py --new_tokens 4")
    assert str(ROOT) not in output.read_text()
