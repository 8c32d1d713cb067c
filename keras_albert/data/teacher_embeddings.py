"""A teacher's sentence embeddings as a second input stream for pretraining.

A directory written by tools/teacher_embeddings.py (or by hand) holds
`texts.txt` (one text per line) and `vectors.npy` ([texts, dim], float).
`TeacherEmbeddings` reads and checks it, keeps a seeded held-out slice for
evaluation, and makes the tf.data streams that `AlbertPretrainer` with
`sentence_embedding_dim` consumes beside its pretraining batches.
"""

import os
import pathlib

import numpy as np

from keras_albert.models.albert_pretrainer import embedding_batch
from keras_albert.utils.backend import optional_tensorflow

# The tf.data half of this module needs TensorFlow; the rest runs without.
tf = optional_tensorflow()[0]

# Texts kept out of training to score the embedding head on held-out text.
HELDOUT_TEXTS = 2048


class TeacherEmbeddings:
    """Texts and teacher vectors, split into training and held-out parts."""

    def __init__(self, directory, seed=0):
        directory = pathlib.Path(os.fspath(directory))
        texts_path, vectors_path = directory / "texts.txt", directory / "vectors.npy"
        for path in (texts_path, vectors_path):
            if not path.is_file():
                raise FileNotFoundError(
                    f"`teacher_embeddings` must be a directory with texts.txt and "
                    f"vectors.npy; {str(path)!r} does not exist."
                )
        texts = texts_path.read_text(encoding="utf-8").split("\n")
        if texts and texts[-1] == "":
            texts.pop()
        vectors = np.load(vectors_path, allow_pickle=False)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(
                f"{directory}: vectors.npy must have one row per line of texts.txt; "
                f"found {len(texts)} texts and vectors of shape {vectors.shape}."
            )
        if not np.isfinite(vectors).all():
            raise ValueError(f"{directory}: vectors.npy holds NaN or infinite values.")
        if len(texts) < 2 * HELDOUT_TEXTS:
            raise ValueError(
                f"{directory} holds {len(texts)} texts; at least {2 * HELDOUT_TEXTS} "
                f"are needed ({HELDOUT_TEXTS} are kept for evaluation)."
            )
        order = np.random.default_rng(seed).permutation(len(texts))
        texts = np.asarray(texts, dtype=object)[order]
        vectors = vectors[order].astype("float32")
        self.dim = vectors.shape[1]
        self.train = (texts[HELDOUT_TEXTS:], vectors[HELDOUT_TEXTS:])
        self.heldout = (texts[:HELDOUT_TEXTS], vectors[:HELDOUT_TEXTS])
        self.seed = seed

    def _stream(self, part, preprocessor, batch_size, shuffle, skip_batches=0):
        texts, vectors = part
        dataset = tf.data.Dataset.from_tensor_slices(
            (tf.constant(texts.tolist(), tf.string), vectors)
        ).repeat()
        if shuffle:
            dataset = dataset.shuffle(min(len(texts), 400_000), seed=self.seed)
        dataset = dataset.batch(batch_size, drop_remainder=True).skip(skip_batches)
        return dataset.map(lambda t, v: (preprocessor(t), v), num_parallel_calls=tf.data.AUTOTUNE)

    def add_to(self, pretraining, preprocessor, batch_size, training=True, skip_batches=0):
        """Zips `pretraining` batches with teacher batches (same count per step)."""
        part = self.train if training else self.heldout
        teacher = self._stream(part, preprocessor, batch_size, training, skip_batches)
        return tf.data.Dataset.zip((pretraining, teacher)).map(
            lambda batch, packed: embedding_batch(*packed)(*batch)
        )
