"""A teacher's sentence embeddings as a second input stream for pretraining.

A directory written by tools/teacher_embeddings.py (or by hand) holds
`texts.txt` (one text per line) and `vectors.npy` ([texts, dim], float).
`TeacherEmbeddings` reads and checks it, keeps a seeded held-out slice for
evaluation, and makes the streams that `AlbertPretrainer` with
`sentence_embedding_dim` consumes beside its pretraining batches: tf.data on
TensorFlow, and off it `TeacherBatches`, whose batch `i` (a seeded
permutation per epoch, texts packed when the batch is made) joins pretraining
batch `i`, so a resumed run sees the texts an uninterrupted run would.
"""

import os
import pathlib

import numpy as np

from keras_albert.models.albert_pretrainer import embedding_batch
from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.validation import check_positive_int

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
        """Zips `pretraining` batches with teacher batches (same count per step).

        `pretraining` is a `tf.data.Dataset`, or NumPy batches with a
        `with_addition` method (`PretrainingBatches`): batch `i` then gets
        teacher batch `i` (`skip_batches` is already in `i`).
        """
        part = self.train if training else self.heldout
        if hasattr(pretraining, "with_addition"):
            teacher = TeacherBatches(
                *part, preprocessor, batch_size, seed=self.seed, shuffle=training
            )
            return pretraining.with_addition(teacher.add)
        teacher = self._stream(part, preprocessor, batch_size, training, skip_batches)
        return tf.data.Dataset.zip((pretraining, teacher)).map(
            lambda batch, packed: embedding_batch(*packed)(*batch)
        )


class TeacherBatches:
    """Teacher batches in NumPy, by index: `(packed, vectors)` for batch `i`.

    Args:
        texts, vectors: one part of a `TeacherEmbeddings`.
        preprocessor: packs a list of texts (keras-hub's Python path off
            TensorFlow).
        batch_size: int, texts per batch.
        seed: int, fixes each epoch's order (`shuffle`).
        shuffle: bool; False keeps the stored order (held-out texts).
    """

    def __init__(self, texts, vectors, preprocessor, batch_size, seed=0, shuffle=True):
        check_positive_int("batch_size", batch_size)
        if batch_size > len(texts):
            raise ValueError(
                f"`batch_size={batch_size}` is larger than the {len(texts)} teacher texts."
            )
        self.texts, self.vectors = texts, vectors
        self.preprocessor = preprocessor
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batches_per_epoch = len(texts) // batch_size

    def rows(self, index):
        epoch, position = divmod(index, self.batches_per_epoch)
        order = np.arange(len(self.texts))
        if self.shuffle:
            order = np.random.default_rng([self.seed, epoch]).permutation(order)
        return order[position * self.batch_size:(position + 1) * self.batch_size]

    def batch(self, index, size=None):
        """Teacher batch `index`, its first `size` rows (all by default)."""
        rows = self.rows(index)[:size]
        packed = self.preprocessor(self.texts[rows].tolist())
        packed = {name: np.asarray(value) for name, value in packed.items()}
        return packed, self.vectors[rows]

    def add(self, index, batch):
        """Adds teacher batch `index` to pretraining batch `(x, y, sample_weight)`
        (cut to its rows: a held-out pass may end with a short batch). The
        NumPy twin of `albert_pretrainer.embedding_batch`."""
        size = len(batch[1]["mlm"])
        packed, vectors = self.batch(index, size)
        x, y, sample_weight = batch
        x = dict(x)
        y = dict(y)
        sample_weight = dict(sample_weight)
        x["embedding_token_ids"] = packed["token_ids"]
        x["embedding_segment_ids"] = packed["segment_ids"]
        x["embedding_padding_mask"] = packed["padding_mask"].astype(np.int32)
        y["sentence_embedding"] = vectors
        sample_weight["sentence_embedding"] = np.ones(len(vectors), np.float32)
        return x, y, sample_weight
