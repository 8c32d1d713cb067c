"""Documents -> fixed windows of next-token training data (issue 37).

GPT-2's packing: the documents run as one stream, each written as the
causal LM preprocessor writes a text (`[CLS] tokens [SEP]`, so `[SEP]`
marks where a document ends and prompts that start with `[CLS]` look like
training text), cut into windows without padding. Window `i` holds stream
tokens `[i * L, i * L + L + 1)`: its inputs are the first `L`, its targets
the last `L`, so consecutive windows share one token and every token after
the first is a target exactly once. Only the last window can be short; its
missing tail is padding that carries no loss.

`CausalWindowBatches` streams them as `(x, y, sample_weight)` batches in a
seeded order that a resumed run rebuilds exactly (`skip_batches`).
"""


import numpy as np

from keras_albert.data.seeded_batches import SeededBatches
from keras_albert.utils.atomic_file import write_file_atomically
from keras_albert.utils.validation import check_positive_int

PAD_ID = 0


def document_stream(documents, start_id, end_id):
    """One int32 array: `[start_id, *document, end_id]` for each document
    (an iterable of 1-D id arrays); empty documents are dropped."""
    pieces = []
    for document in documents:
        ids = np.asarray(document, np.int32).reshape(-1)
        if ids.size:
            pieces.append(np.concatenate([[start_id], ids, [end_id]]).astype(np.int32))
    if not pieces:
        raise ValueError("The corpus holds no tokens: no causal LM windows can be made.")
    return np.concatenate(pieces)


def pack_windows(stream, window_length):
    """`{"token_ids": [N, L + 1], "lengths": [N]}` covering `stream`.

    Args:
        stream: 1-D int array (see `document_stream`), at least 2 tokens.
        window_length: int `L`, the model's input length.
    """
    check_positive_int("window_length", window_length)
    stream = np.asarray(stream, np.int32)
    if stream.ndim != 1 or stream.size < 2:
        raise ValueError(
            f"`stream` must be a 1-D array of at least 2 tokens. Received: shape {stream.shape}"
        )
    count = -(-(stream.size - 1) // window_length)
    padded = np.full(count * window_length + 1, PAD_ID, np.int32)
    padded[: stream.size] = stream
    starts = np.arange(count) * window_length
    token_ids = padded[starts[:, None] + np.arange(window_length + 1)]
    lengths = np.minimum(stream.size - starts, window_length + 1).astype(np.int32)
    return {"token_ids": token_ids, "lengths": lengths}


def write_windows(windows, path):
    """Writes `pack_windows`' arrays to the `.npz` file `path`, atomically."""
    write_file_atomically(path, lambda file: np.savez(file, **windows), name="path")
    return len(windows["lengths"])


def read_windows(path):
    with np.load(path, allow_pickle=False) as data:
        windows = {name: data[name] for name in ("token_ids", "lengths")}
    return windows


def window_batch(windows, rows):
    """Rows of `windows` as `(x, y, sample_weight)` for `AlbertCausalLM`:
    inputs are tokens `[0, L)`, targets `[1, L + 1)`, weight 1 on real
    targets only, padding_mask 1 on their inputs."""
    token_ids = windows["token_ids"][rows]
    lengths = windows["lengths"][rows]
    # Real inputs are those with a real target (a short window's last real
    # token has none and is masked like the padding after it).
    real = np.arange(token_ids.shape[1] - 1) < lengths[:, None] - 1
    x = {"token_ids": token_ids[:, :-1], "padding_mask": real.astype(np.int32)}
    return x, token_ids[:, 1:], real.astype(np.float32)


class CausalWindowBatches(SeededBatches):
    """The batch stream over `windows` (from `pack_windows`).

    Training (`is_training=True`) draws a seeded permutation per epoch,
    full batches only, without end; otherwise one pass in order (the last
    batch may be short). Batch `i` depends on `(seed, i)` alone, so a run
    resumed with `skip_batches` sees the uninterrupted run's batches.
    """

    def __init__(self, windows, batch_size, seed=0, is_training=True, skip_batches=0):
        super().__init__(
            len(windows["lengths"]), batch_size, seed, is_training, skip_batches,
            rows_name="windows of the corpus",
            hint=" (a longer corpus or a smaller --batch_size)",
        )
        self.windows = windows

    def batch(self, index):
        return window_batch(self.windows, self.rows(index))

    def __len__(self):
        return self.batches_per_epoch
