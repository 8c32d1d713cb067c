"""Train a small GPT-2-style ALBERT (one shared block, factorized embedding)
on Pride and Prejudice, then generate from it (issue 37).

    python examples/causal_generation.py
    python examples/causal_generation.py --steps 600 --save_preset runs/causal_preset
    python -m keras_albert generate --preset=runs/causal_preset --prompt="it is a truth"

Uses the bundled albert_tiny_en preset's vocabulary and the bundled Austen
text: no network. A few hundred steps on a CPU make a model that writes
Austen-flavoured word salad; it shows the API, not a quality claim.
"""

import argparse
import os
import time

import keras
import numpy as np
from keras_hub.samplers import TopKSampler
from keras_hub.samplers import TopPSampler

import keras_albert
from keras_albert.datasets.austen import load_austen_documents

PROMPTS = ["it is a truth universally", "mr. darcy", "elizabeth said"]


def build_causal_lm(sequence_length=48):
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(),
        num_layers=4,
        num_groups=1,  # ALBERT: the four layers run one shared block
        num_heads=2,
        embedding_dim=64,  # factorized: V x 64, then 64 -> 128
        hidden_dim=128,
        intermediate_dim=256,
        max_sequence_length=64,
        causal=True,
    )
    preprocessor = keras_albert.AlbertCausalLMPreprocessor(tokenizer, sequence_length=sequence_length)
    return keras_albert.AlbertCausalLM(backbone, preprocessor=preprocessor)


def loss_per_token(causal_lm, texts, batch_size=64):
    """Mean next-token cross-entropy over real tokens (Keras's compiled loss
    divides by every position, padding included)."""
    total, count = 0.0, 0.0
    for start in range(0, len(texts), batch_size):
        x, y, weights = causal_lm.preprocessor(texts[start : start + batch_size])
        logits = keras.ops.convert_to_numpy(causal_lm(x)).astype("float64")
        logits -= logits.max(axis=-1, keepdims=True)
        log_probabilities = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        y, weights = np.asarray(y), np.asarray(weights, "float64")
        chosen = np.take_along_axis(log_probabilities, y[..., None], axis=-1)[..., 0]
        total -= (chosen * weights).sum()
        count += weights.sum()
    return total / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps of 32 sentences")
    parser.add_argument("--max_length", type=int, default=24, help="tokens per generated text")
    parser.add_argument("--save_preset", help="directory to save the trained preset in (must not exist)")
    args = parser.parse_args()
    if args.save_preset and os.path.lexists(args.save_preset):
        parser.error(f"--save_preset {args.save_preset!r} exists; name a new directory")

    keras.utils.set_random_seed(0)
    sentences = load_austen_documents(["prideprejudice"], exclude=(), sentences=True)[0]
    sentences = (sentences * (1 + 32 * args.steps // len(sentences)))[: 32 * args.steps]
    # Held out: the first 256 sentences of Persuasion, a novel it never sees.
    held_out = load_austen_documents(["persuasion"], exclude=(), sentences=True)[0][:256]
    causal_lm = build_causal_lm()
    causal_lm.compile(optimizer=keras.optimizers.Adam(2e-3), sampler="greedy")
    before = loss_per_token(causal_lm, held_out)
    causal_lm.fit(sentences, batch_size=32, epochs=1, verbose=2)
    after = loss_per_token(causal_lm, held_out)
    print(f"held-out loss (Persuasion, nats per token): before {before:.3f} after {after:.3f}")

    # Greedy decoding with the key/value cache and without it: same tokens.
    timings, outputs = {}, {}
    for use_cache in (True, False):
        causal_lm.generate(PROMPTS, max_length=args.max_length, use_cache=use_cache)  # compile
        start = time.perf_counter()
        outputs[use_cache] = causal_lm.generate(PROMPTS, max_length=args.max_length, use_cache=use_cache)
        timings[use_cache] = time.perf_counter() - start
    for text in outputs[True]:
        print(f"greedy: {text}")
    print(f"greedy cached == uncached: {outputs[True] == outputs[False]} "
          f"(cached {timings[True]:.2f} s, uncached {timings[False]:.2f} s)")

    for sampler in (TopKSampler(k=10, seed=1, temperature=0.8), TopPSampler(p=0.9, seed=1, temperature=0.8)):
        causal_lm.compile(sampler=sampler)
        for text in causal_lm.generate(PROMPTS, max_length=args.max_length):
            print(f"{type(sampler).__name__}: {text}")

    if args.save_preset:
        causal_lm.save_to_preset(args.save_preset)
        print(f"saved the preset in {args.save_preset}")


if __name__ == "__main__":
    main()
