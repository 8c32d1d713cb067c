"""Plain-text corpora -> documents (lists of sentences), streamed.

Google's format is one sentence per line with a blank line between
documents. Prose whose lines are wrapped (a blank line between paragraphs)
reads with `sentence_split="punctuation"`; a corpus with one file per
document reads with `document_boundary="file"`. Files are read line by line
and documents are yielded one at a time, so memory does not grow with the
corpus (only with the longest document).
"""

import codecs
import glob
import os

from keras_albert.datasets.austen import split_sentences

DOCUMENT_BOUNDARIES = ("blank_line", "file")
SENTENCE_SPLITS = ("line", "punctuation")
DECODE_ERRORS = ("strict", "replace", "ignore")


def read_documents(
    paths,
    document_boundary="blank_line",
    sentence_split="line",
    encoding="utf-8",
    errors="strict",
):
    """Streams documents, each a list of sentence strings, from text files.

    A file's end always ends a document. Blank lines end a document
    (`document_boundary="blank_line"`, Google's format) or only a paragraph
    (`"file"`: one document per file). Paths may be local or any filesystem
    `tf.io.gfile` knows (`gs://...`), and may be glob patterns.

    Args:
        paths: a path or glob pattern, or a list of them.
        document_boundary: `"blank_line"` or `"file"`.
        sentence_split: `"line"` (each non-blank line is a sentence) or
            `"punctuation"` (lines of a paragraph are joined and split after
            `.`, `!`, `?`; "Mr." and similar do not end a sentence).
        encoding: text encoding of the files.
        errors: what to do with bytes that are not valid `encoding`:
            `"strict"` raises a `ValueError` naming the file and line,
            `"replace"` substitutes U+FFFD, `"ignore"` drops them.

    Returns:
        A generator of documents (lists of str). Errors about the arguments
        and missing files are raised at once, not at the first `next()`.

    Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(path, "w").write("A cat.\\nA dog.\\n\\nA bird.\\n")
    >>> list(read_documents(path))
    [['A cat.', 'A dog.'], ['A bird.']]
    """
    _check_modes(document_boundary, sentence_split)
    if errors not in DECODE_ERRORS:
        raise ValueError(
            f"`errors` must be one of {DECODE_ERRORS}. Received: errors={errors!r}"
        )
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ValueError(
            "`encoding` must name a Python codec such as 'utf-8'. "
            f"Received: encoding={encoding!r}"
        ) from None
    files = _resolve_paths(paths)

    def documents():
        for path in files:
            lines = _decoded_lines(path, encoding, errors)
            yield from _documents_from_lines(lines, document_boundary, sentence_split)

    return documents()


def split_documents(text, document_boundary="blank_line", sentence_split="line"):
    """Splits one in-memory text as `read_documents` splits a file.

    Example:
    >>> split_documents("Hi there. Bye.\\n\\nNext one.",
    ...                 sentence_split="punctuation")
    [['Hi there.', 'Bye.'], ['Next one.']]
    """
    if not isinstance(text, str):
        raise ValueError(
            f"`text` must be a str. Received: text={text!r:.80} of type "
            f"{type(text).__name__}"
        )
    _check_modes(document_boundary, sentence_split)
    return list(
        _documents_from_lines(text.splitlines(), document_boundary, sentence_split)
    )


def _check_modes(document_boundary, sentence_split):
    if document_boundary not in DOCUMENT_BOUNDARIES:
        raise ValueError(
            f"`document_boundary` must be one of {DOCUMENT_BOUNDARIES}. "
            f"Received: document_boundary={document_boundary!r}"
        )
    if sentence_split not in SENTENCE_SPLITS:
        raise ValueError(
            f"`sentence_split` must be one of {SENTENCE_SPLITS}. "
            f"Received: sentence_split={sentence_split!r}"
        )


def _documents_from_lines(lines, document_boundary, sentence_split):
    document, paragraph = [], []
    for line in lines:
        line = line.strip()
        if line:
            if sentence_split == "line":
                document.append(line)
            else:
                paragraph.append(line)
            continue
        if paragraph:
            document.extend(split_sentences(" ".join(paragraph)))
            paragraph = []
        if document_boundary == "blank_line" and document:
            yield document
            document = []
    if paragraph:
        document.extend(split_sentences(" ".join(paragraph)))
    if document:
        yield document


def _is_remote(path):
    return "://" in path


def _resolve_paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)) or not paths:
        raise ValueError(
            "`paths` must be a path, a glob pattern, or a non-empty list of "
            f"them. Received: paths={paths!r:.200}"
        )
    files = []
    for pattern in paths:
        if not isinstance(pattern, (str, os.PathLike)):
            raise ValueError(
                "`paths` entries must be str or os.PathLike. Received: "
                f"{pattern!r:.80} of type {type(pattern).__name__}"
            )
        pattern = os.fspath(pattern)
        if _is_remote(pattern):
            import tensorflow as tf

            matches = sorted(tf.io.gfile.glob(pattern))
        else:
            matches = sorted(glob.glob(pattern)) or (
                [pattern] if os.path.isfile(pattern) else []
            )
            matches = [m for m in matches if os.path.isfile(m)]
        if not matches:
            raise FileNotFoundError(
                f"`paths` entry {pattern!r} matches no file."
            )
        files.extend(matches)
    return files


def _decoded_lines(path, encoding, errors):
    if _is_remote(path):
        import tensorflow as tf

        stream = tf.io.gfile.GFile(path, "rb")
    else:
        stream = open(path, "rb")
    with stream:
        for number, raw in enumerate(stream, start=1):
            try:
                yield raw.decode(encoding, errors)
            except UnicodeDecodeError as error:
                bad = raw[error.start : error.end]
                raise ValueError(
                    f"{path}, line {number}: bytes {bad!r} at byte {error.start} "
                    f"are not valid {encoding}. Fix the file, or pass "
                    "`errors='replace'` (substitute U+FFFD) or "
                    "`errors='ignore'` (drop them)."
                ) from None
