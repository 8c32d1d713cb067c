"""Decodes with a saved AlbertCausalLM on one Keras backend.

Run by `tests/backends/test_causal_lm_backends.py` in a fresh process per
backend (Keras picks its backend once per process):

    KERAS_BACKEND=jax python tests/backends/causal_lm_worker.py CASES OUT.npz

CASES holds `inputs.npz` (packed prompts of different lengths) and
`<name>.keras` causal LMs saved on TensorFlow. Writes, per model, the
logits of the full pass, greedy tokens with and without the key/value
cache, and seeded top-k tokens; on PyTorch, for `shared_all`, also the
greedy tokens of the decoding steps under `torch.compile`
(`compile(jit_compile=True)`) and how many graphs it compiled.
"""

import os
import pathlib
import sys

if os.environ.get("KERAS_ALBERT_BLOCK_TENSORFLOW"):
    sys.modules["tensorflow"] = None
    sys.modules["tensorflow_text"] = None

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras_hub.samplers import TopKSampler  # noqa: E402

import keras_albert  # noqa: E402, F401


def decode(model, inputs):
    results = {"logits": keras.ops.convert_to_numpy(model(inputs))}
    model.compile(sampler="greedy")
    for label, use_cache in (("cached", True), ("uncached", False)):
        out = model.generate(inputs, stop_token_ids=None, use_cache=use_cache)
        results[f"greedy_{label}"] = np.asarray(out["token_ids"])
    model.compile(sampler=TopKSampler(k=4, seed=7, temperature=0.8))
    top_k = np.asarray(model.generate(inputs, stop_token_ids=None)["token_ids"])
    results["top_k_cached"] = top_k
    results["top_k_among_4_best"] = among_best(model, inputs, top_k, 4)
    return results


def decode_compiled_on_torch(model, inputs):
    """Greedy tokens with `jit_compile=True` on PyTorch, and the graphs
    torch.compile made: after one call per mode, and after a second."""
    from torch._dynamo.utils import counters

    model.compile(sampler="greedy", jit_compile=True)
    results, graphs = {}, []
    for repeat in range(2):
        for label, use_cache in (("cached", True), ("uncached", False)):
            out = model.generate(inputs, stop_token_ids=None, use_cache=use_cache)
            results[f"greedy_{label}_compiled"] = np.asarray(out["token_ids"])
        graphs.append(counters["stats"]["unique_graphs"])
    results["compiled_graphs"] = np.array(graphs)
    return results


def among_best(model, inputs, tokens, k):
    """Whether every generated token was among the k most likely given its
    prefix (the backends' random streams differ; the rule does not)."""
    logits = keras.ops.convert_to_numpy(model({"token_ids": tokens, "padding_mask": np.ones_like(tokens)}))
    ok = []
    for row, length in enumerate(inputs["padding_mask"].sum(axis=-1)):
        for index in range(int(length), tokens.shape[1]):
            ok.append(tokens[row, index] in np.argsort(logits[row, index - 1])[-k:])
    return np.array(ok)


def main(cases, out):
    cases = pathlib.Path(cases)
    inputs = dict(np.load(cases / "inputs.npz"))
    results = {}
    for path in sorted(cases.glob("*.keras")):
        model = keras.saving.load_model(path)
        for key, value in decode(model, inputs).items():
            results[f"{path.stem}/{key}"] = value
        if keras.config.backend() == "torch" and path.stem == "shared_all":
            for key, value in decode_compiled_on_torch(model, inputs).items():
                results[f"{path.stem}/{key}"] = value
    np.savez(out, **results)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
