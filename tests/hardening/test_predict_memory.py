"""`predict` over a stream of 100,000 texts keeps the process's memory flat.

Runs on every backend, TensorFlow installed or not: the stream is a tf.data
pipeline over a generator where TensorFlow is installed, a lazy grain
dataset where it is not (what keras-hub's tasks take there):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_predict_memory.py
"""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.utils.backend import tensorflow_available
from tests.hardening.conftest import tiny_backbone

TEXTS = 100_000
BATCH = 2000
WORDS = "the cat sat on a mat while anne walked slowly home in the evening rain".split()
# Resident memory may grow at most this much after warm-up.
GROWTH_LIMIT_MB = 300


def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def short_texts():
    rng = np.random.default_rng(0)
    for _ in range(TEXTS):
        yield " ".join(rng.choice(WORDS, size=rng.integers(3, 12)))


def text_at(index):
    rng = np.random.default_rng([0, index])
    return " ".join(rng.choice(WORDS, size=rng.integers(3, 12)))


def tokenized_batches(preprocessor):
    """The texts in batches of BATCH, tokenized as the stream goes, so
    `predict` sees a stream of batches and never the whole corpus."""
    if tensorflow_available():
        import tensorflow as tf

        return (
            tf.data.Dataset.from_generator(short_texts, output_signature=tf.TensorSpec((), tf.string))
            .batch(BATCH)
            .map(preprocessor, num_parallel_calls=2)
            .prefetch(2)
        )
    import grain

    # Lazy: each text is made when its batch is read.
    return (
        grain.MapDataset.range(TEXTS)
        .map(text_at)
        .batch(BATCH, batch_fn=np.asarray)
        .map(preprocessor)
        .to_iter_dataset()
    )


class RssSampler(keras.callbacks.Callback):
    """Resident memory every `every` batches of `predict`."""

    def __init__(self, every):
        super().__init__()
        self.every, self.samples = every, []

    def on_predict_batch_end(self, batch, logs=None):
        if (batch + 1) % self.every == 0:
            self.samples.append(((batch + 1) * BATCH, rss_mb()))


@pytest.mark.large
def test_predict_over_100k_texts_keeps_memory_flat(tokenizer):
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    classifier = keras_albert.AlbertClassifier(tiny_backbone(), num_classes=3)
    dataset = tokenized_batches(preprocessor)
    classifier.compile()  # XLA predict step
    sampler = RssSampler(every=10_000 // BATCH)
    logits = classifier.predict(dataset, verbose=0, callbacks=[sampler])
    assert logits.shape == (TEXTS, 3) and np.isfinite(logits).all()
    samples = sampler.samples
    warm = samples[1][1]  # after 20,000 texts: graphs built, buffers allocated
    growth = max(mb for _, mb in samples[1:]) - warm
    print("RSS (MB) by texts seen:", [(n, round(mb)) for n, mb in samples], f"growth after warm-up {growth:.1f} MB")
    assert len(samples) == TEXTS // 10_000
    assert growth < GROWTH_LIMIT_MB, samples
