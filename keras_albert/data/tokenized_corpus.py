"""A corpus tokenized once, stored small: what travels to an accelerator.

`write_tokenized_corpus` stores `TokenizedDocument`s (`tokenize_documents`)
as one compressed `.npz`: every id in one array (int16 when the vocabulary
fits, as ALBERT's 8,000 and 30,000 do), the sentence boundaries and the
sentences per document. `read_tokenized_corpus` gives the documents back
for `create_pretraining_instances`, which makes instances (masks, sentence
order, `dupe_factor` copies) where the training runs: the instances are
several times the size of the text they come from, the ids are not.
"""

import os
import pathlib
import zipfile

import numpy as np

from keras_albert.data.pretraining_instances import TokenizedDocument
from keras_albert.utils.atomic_file import write_file_atomically

_FIELDS = ("token_ids", "sentence_offsets", "document_sentences", "vocabulary_size")


def write_tokenized_corpus(documents, path, vocabulary_size):
    """Writes tokenized documents to `path` (`.npz`), atomically.

    Args:
        documents: iterable of `TokenizedDocument`.
        path: the `.npz` file to write (its directory must exist).
        vocabulary_size: int, the SentencePiece model's size (picks int16
            ids when they fit; recorded and checked on reading).

    Returns:
        `(documents, tokens)` written.
    """
    path = pathlib.Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"`path` must end in .npz. Received: path={os.fspath(path)!r}")
    if isinstance(vocabulary_size, bool) or not isinstance(vocabulary_size, int) or vocabulary_size < 5:
        raise ValueError(
            "`vocabulary_size` must be an int >= 5 (ALBERT's special ids). "
            f"Received: vocabulary_size={vocabulary_size!r}"
        )
    ids, offsets, sentences = [], [], []
    start = 0
    for index, document in enumerate(documents):
        if not isinstance(document, TokenizedDocument):
            raise ValueError(
                f"`documents[{index}]` must be a TokenizedDocument (see "
                f"tokenize_documents). Received: {type(document).__name__}"
            )
        ids.append(document.token_ids)
        offsets.append(document.sentence_offsets[1:] + start)
        sentences.append(len(document.sentence_offsets) - 1)
        start += int(document.sentence_offsets[-1])
    if not ids:
        raise ValueError("`documents` is empty: no tokenized corpus written.")
    token_ids = np.concatenate(ids)
    if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= vocabulary_size):
        raise ValueError(
            f"Token ids must lie in [0, {vocabulary_size}); found "
            f"[{token_ids.min()}, {token_ids.max()}]."
        )
    dtype = np.int16 if vocabulary_size <= np.iinfo(np.int16).max + 1 else np.int32
    arrays = {
        "token_ids": token_ids.astype(dtype),
        "sentence_offsets": np.concatenate([[0], *offsets]).astype(np.int64),
        "document_sentences": np.asarray(sentences, np.int64),
        "vocabulary_size": np.asarray(vocabulary_size, np.int64),
    }
    write_file_atomically(path, lambda file: np.savez_compressed(file, **arrays), name="path")
    return len(sentences), int(token_ids.size)


def read_tokenized_corpus(path, vocabulary_size=None):
    """The `TokenizedDocument`s of a file `write_tokenized_corpus` wrote.

    Args:
        path: the `.npz` file.
        vocabulary_size: int or None; if given, the file's must equal it
            (ids of another vocabulary would train on garbage).
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"{os.fspath(path)!r} is not a tokenized corpus (.npz): {error}") from None
    missing = sorted(set(_FIELDS) - set(arrays))
    if missing:
        raise ValueError(f"{os.fspath(path)!r} is not a tokenized corpus: it lacks {missing}.")
    stored = int(arrays["vocabulary_size"])
    if vocabulary_size is not None and stored != vocabulary_size:
        raise ValueError(
            f"{os.fspath(path)!r} was tokenized with a {stored}-piece vocabulary; "
            f"this run's has {vocabulary_size}. Tokenize the corpus again with it."
        )
    ids = arrays["token_ids"].astype(np.int32)
    offsets = arrays["sentence_offsets"]
    bounds = np.concatenate([[0], np.cumsum(arrays["document_sentences"])])
    if bounds[-1] != len(offsets) - 1 or offsets[-1] != len(ids):
        raise ValueError(f"{os.fspath(path)!r}: its offsets do not match its ids (a damaged file).")
    documents = []
    for first, last in zip(bounds[:-1], bounds[1:]):
        start, stop = offsets[first], offsets[last]
        documents.append(TokenizedDocument(ids[start:stop], offsets[first:last + 1] - start))
    return documents
