"""AlbertCausalLM decodes the same on JAX and PyTorch as on TensorFlow: a
model saved on TensorFlow is loaded in a JAX (and a PyTorch) process with
TensorFlow unimportable, and its logits and generated tokens compared."""

import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_albert
from tests.backends import causal_lm_worker

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = dict(
    vocabulary_size=60, num_layers=4, num_heads=2, embedding_dim=8,
    hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
)
# Each in its own process with TensorFlow unimportable.
BACKENDS = ("jax", "torch")
CASES = {
    "shared_all": dict(sharing="all", num_groups=2, num_inner_repetitions=2),
    "gpt2_layout": dict(sharing="none", embedding_dim=16, normalize_first=True),
}


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    cases = tmp_path_factory.mktemp("causal_cases")
    keras.utils.set_random_seed(0)
    for name, overrides in CASES.items():
        backbone = keras_albert.AlbertBackbone(**{**SMALL, **overrides}, causal=True)
        keras_albert.AlbertCausalLM(backbone).save(cases / f"{name}.keras")
    token_ids = np.zeros((3, 12), "int32")
    padding_mask = np.zeros((3, 12), "int32")
    for row, prompt in enumerate([[2, 7, 9, 11], [2, 5], [2, 40, 41, 42, 43, 44]]):
        token_ids[row, : len(prompt)] = prompt
        padding_mask[row, : len(prompt)] = 1
    np.savez(cases / "inputs.npz", token_ids=token_ids, padding_mask=padding_mask)
    tensorflow_out = cases.parent / "tensorflow.npz"
    causal_lm_worker.main(cases, tensorflow_out)
    results = {"tensorflow": dict(np.load(tensorflow_out))}
    for backend in BACKENDS:
        env = dict(os.environ, KERAS_BACKEND=backend, KERAS_ALBERT_BLOCK_TENSORFLOW="1")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        out = cases.parent / f"{backend}.npz"
        result = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "backends" / "causal_lm_worker.py"), str(cases), str(out)],
            env=env, capture_output=True, text=True, timeout=900,
        )
        assert result.returncode == 0, result.stderr[-4000:]
        results[backend] = dict(np.load(out))
    return results


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_logits_match_tensorflow(computed, case, backend):
    np.testing.assert_allclose(
        computed[backend][f"{case}/logits"], computed["tensorflow"][f"{case}/logits"], atol=1e-5
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_decodes_the_same_tokens(computed, case, backend):
    tensorflow, other = computed["tensorflow"], computed[backend]
    for key in ("greedy_cached", "greedy_uncached"):
        np.testing.assert_array_equal(other[f"{case}/{key}"], tensorflow[f"{case}/greedy_cached"])
    # Prompts are kept, and every row is decoded to the full width.
    assert (other[f"{case}/greedy_cached"][1, :2] == [2, 5]).all()
    assert other[f"{case}/top_k_among_4_best"].all()
    assert tensorflow[f"{case}/top_k_among_4_best"].all()


def test_compiled_decoding_on_torch_decodes_the_same_in_one_graph_a_mode(computed):
    torch, tensorflow = computed["torch"], computed["tensorflow"]
    for key in ("greedy_cached_compiled", "greedy_uncached_compiled"):
        np.testing.assert_array_equal(torch[f"shared_all/{key}"], tensorflow["shared_all/greedy_cached"])
    # One graph for the cached step (the index is a tensor: no graph per
    # step), one for the whole window; none more on the second calls.
    np.testing.assert_array_equal(torch["shared_all/compiled_graphs"], [2, 2])
