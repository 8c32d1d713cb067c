"""Pretraining instances (segment pairs + n-gram masks) as Google's ALBERT.

`create_pretraining_instances` follows `create_pretraining_data.py` of
google-research/albert: sentences of a document are packed into chunks
that fill `max_seq_length` (a random shorter target with probability
`short_seq_prob`), a chunk splits at a random sentence into segments A and
B, the pair is truncated (the longer side, a random end, one token at a
time), and masked with whole-word n-grams (see `ngram_masking`).

Sentence tasks:
    `"sop"` (ALBERT): B follows A (label 0), or they swap (label 1, p=0.5).
    `"nsp"` (BERT): B follows A (label 0), or B comes from a random other
        document (label 1, p=0.5) and A's unused sentences are put back.
    `"none"` (MLM only): one segment `[CLS] A [SEP]`, label 0.

As in the original, a chunk of a single sentence (in "sop" and "nsp") takes
its B from a random other document and gets label 1: a document with one
sentence is handled that way, so SOP labels lean slightly towards 1 when
sentences are long compared with the target length.

Differences from the original, to stream: documents are shuffled in a
buffer of `document_buffer_size` (the original shuffles the whole corpus),
random other documents come from that buffer, instances are shuffled in a
buffer of `instance_buffer_size`, and the `dupe_factor` copies of a
document are made when it leaves the buffer. Memory stays flat as the
corpus grows. One NumPy generator drives every random choice, so a seed
fixes the output exactly.
"""

import itertools
import os
import typing

import numpy as np
import sentencepiece

from keras_albert.data.ngram_masking import CLS_ID
from keras_albert.data.ngram_masking import SEP_ID
from keras_albert.data.ngram_masking import NgramMasker
from keras_albert.data.ngram_masking import start_piece_table
from keras_albert.utils.text_normalization import normalize_text
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int

SENTENCE_TASKS = ("sop", "nsp", "none")
MIN_SEQ_LENGTH = 8
_ALBERT_PIECES = {0: "<pad>", 1: "<unk>", 2: "[CLS]", 3: "[SEP]", 4: "[MASK]"}


class PretrainingInstance(typing.NamedTuple):
    """One padded instance; fields are the TFRecord feature names."""

    input_ids: np.ndarray  # int32 [max_seq_length]
    input_mask: np.ndarray  # int32 [max_seq_length]
    segment_ids: np.ndarray  # int32 [max_seq_length]
    token_boundary: np.ndarray  # int32 [max_seq_length]
    masked_lm_positions: np.ndarray  # int32 [max_predictions_per_seq]
    masked_lm_ids: np.ndarray  # int32 [max_predictions_per_seq]
    masked_lm_weights: np.ndarray  # float32 [max_predictions_per_seq]
    next_sentence_labels: int  # 1 = swapped (SOP) / random next (NSP)


class TokenizedDocument(typing.NamedTuple):
    """A document's ids; sentence `i` is `token_ids[offsets[i]:offsets[i+1]]`."""

    token_ids: np.ndarray  # int32
    sentence_offsets: np.ndarray  # int64, one more than sentences


def load_sentencepiece(proto):
    """Loads and checks an ALBERT SentencePiece model.

    Args:
        proto: the serialized model (bytes, as `train_sentencepiece`
            returns) or the path of a `.model` file.

    Returns:
        A `sentencepiece.SentencePieceProcessor`.

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> texts = ["the cat sat.", "the dog ran.", "a bird sang."] * 40
    >>> sp = load_sentencepiece(train_sentencepiece(texts, 20))
    >>> sp.id_to_piece(4)
    '[MASK]'
    """
    if isinstance(proto, (str, os.PathLike)):
        path = os.fspath(proto)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"`proto` file {path!r} does not exist.")
        with open(path, "rb") as file:
            proto = file.read()
    if not isinstance(proto, (bytes, bytearray)):
        raise ValueError(
            "`proto` must be a serialized SentencePiece model (bytes) or the "
            f"path of a .model file. Received: proto={proto!r:.80} of type "
            f"{type(proto).__name__}"
        )
    try:
        processor = sentencepiece.SentencePieceProcessor(model_proto=bytes(proto))
    except Exception as error:
        raise ValueError(
            "`proto` is not a valid SentencePiece model. SentencePiece said: "
            f"{error}"
        ) from None
    size = processor.get_piece_size()
    found = {i: processor.id_to_piece(i) for i in _ALBERT_PIECES if i < size}
    if size <= len(_ALBERT_PIECES) or found != _ALBERT_PIECES:
        raise ValueError(
            "`proto` must be an ALBERT vocabulary: more than 5 pieces with "
            f"ids {_ALBERT_PIECES} (see `train_sentencepiece`). Received: "
            f"{size} pieces, ids 0-4 = {found}"
        )
    return processor


def tokenize_documents(documents, proto, lowercase=True):
    """Tokenizes documents of sentences into `TokenizedDocument`s.

    Sentences are normalised as ALBERT's tokenizer does (`normalize_text`)
    and encoded in one SentencePiece batch per document. Sentences and
    documents that come out empty are dropped.

    Args:
        documents: iterable of documents, each a list of sentence strings.
        proto: SentencePiece model (bytes or path), see `load_sentencepiece`.
        lowercase: bool, lowercase and strip accents (uncased models).

    Returns:
        A generator of `TokenizedDocument`.

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> texts = ["the cat sat.", "the dog ran.", "a bird sang."] * 40
    >>> proto = train_sentencepiece(texts, 20)
    >>> doc = next(tokenize_documents([["The cat sat.", "A dog ran."]], proto))
    >>> doc.sentence_offsets.size
    3
    """
    processor = proto
    if not isinstance(proto, sentencepiece.SentencePieceProcessor):
        processor = load_sentencepiece(proto)
    _check_documents(documents)
    return _tokenize(documents, processor, bool(lowercase))


def _check_documents(documents):
    if isinstance(documents, (str, bytes)) or not hasattr(documents, "__iter__"):
        raise ValueError(
            "`documents` must be an iterable of documents, each a list of "
            "sentence strings (see `read_documents`, `split_documents`). "
            f"Received: documents={documents!r:.80} of type "
            f"{type(documents).__name__}"
        )


def _normalize(sentence, lowercase):
    # ASCII is unchanged by NFKD and has no combining marks, and str.split()
    # splits where normalize_text's `\s+` does: the same result, ~10x faster.
    if sentence.isascii():
        text = " ".join(sentence.split()).replace("``", '"').replace("''", '"')
        return text.lower() if lowercase else text
    return normalize_text(sentence, lowercase=lowercase)


def _tokenize(documents, processor, lowercase):
    for index, document in enumerate(documents):
        if isinstance(document, TokenizedDocument):
            # Tokenized earlier (`tokenized_corpus`): the ids go as they are.
            yield document
            continue
        if isinstance(document, str) or not isinstance(document, (list, tuple)):
            raise ValueError(
                f"`documents[{index}]` must be a list of sentence strings. "
                f"Received: {document!r:.80} of type {type(document).__name__}"
            )
        texts = []
        for sentence in document:
            if not isinstance(sentence, str):
                raise ValueError(
                    f"`documents[{index}]` must hold only str sentences. "
                    f"Received: {sentence!r:.80} of type "
                    f"{type(sentence).__name__}"
                )
            text = _normalize(sentence, lowercase)
            if text:
                texts.append(text)
        if not texts:
            continue
        pieces = [p for p in processor.encode(texts, out_type=int) if p]
        if not pieces:
            continue
        lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
        offsets = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.fromiter(
            itertools.chain.from_iterable(pieces), np.int32, int(offsets[-1])
        )
        yield TokenizedDocument(ids, offsets)


def create_pretraining_instances(
    documents,
    proto,
    max_seq_length=512,
    max_predictions_per_seq=20,
    masked_lm_prob=0.15,
    short_seq_prob=0.1,
    max_ngram=3,
    favor_shorter_ngram=True,
    whole_word_masking=True,
    sentence_task="sop",
    dupe_factor=1,
    seed=12345,
    lowercase=True,
    document_buffer_size=1000,
    instance_buffer_size=4096,
):
    """Creates ALBERT pretraining instances from documents, streaming.

    Args:
        documents: iterable of documents, each a list of sentence strings
            (e.g. `read_documents(paths)`) or a `TokenizedDocument` (e.g.
            `read_tokenized_corpus(path)`, tokenized with this `proto`);
            read once, lazily.
        proto: SentencePiece model (bytes or `.model` path) with ALBERT's
            ids `<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4.
        max_seq_length: int >= 8, tokens per instance including specials.
        max_predictions_per_seq: int in [1, max_seq_length].
        masked_lm_prob: float in [0, 1]; 0 stores no masks (for dynamic
            masking in the input pipeline).
        short_seq_prob: float in [0, 1], chance of a shorter random target.
        max_ngram: int, longest masked span in words (3).
        favor_shorter_ngram: bool, span length weights 1/n.
        whole_word_masking: bool, mask whole words.
        sentence_task: `"sop"`, `"nsp"` or `"none"` (see module docstring).
        dupe_factor: int, instances made from each document with different
            segmentations and masks (Google's default is 40).
        seed: int >= 0; the same seed and input give the same instances.
        lowercase: bool, normalise text as an uncased ALBERT tokenizer.
        document_buffer_size: int, documents held for shuffling and as the
            pool of random other documents.
        instance_buffer_size: int, instances held for shuffling (1 keeps
            the order of creation).

    Returns:
        A generator of `PretrainingInstance`. Argument errors are raised at
        once; an empty corpus raises `ValueError` when the generator ends.

    Example:
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> texts = ["the cat sat.", "the dog ran.", "a bird sang."] * 40
    >>> proto = train_sentencepiece(texts, 20)
    >>> docs = [texts[i:i + 6] for i in range(0, 120, 6)]
    >>> instances = list(create_pretraining_instances(
    ...     docs, proto, max_seq_length=16, max_predictions_per_seq=3))
    >>> instances[0].input_ids.shape, instances[0].masked_lm_ids.shape
    ((16,), (3,))
    """
    processor = load_sentencepiece(proto)
    if (
        isinstance(max_seq_length, bool)
        or not isinstance(max_seq_length, int)
        or max_seq_length < MIN_SEQ_LENGTH
    ):
        raise ValueError(
            f"`max_seq_length` must be an int >= {MIN_SEQ_LENGTH} ([CLS], two "
            "[SEP] and room for both segments). Received: "
            f"max_seq_length={max_seq_length!r}"
        )
    check_positive_int("max_predictions_per_seq", max_predictions_per_seq)
    if max_predictions_per_seq > max_seq_length:
        raise ValueError(
            "`max_predictions_per_seq` must be <= `max_seq_length`. Received: "
            f"max_predictions_per_seq={max_predictions_per_seq}, "
            f"max_seq_length={max_seq_length}"
        )
    check_fraction("masked_lm_prob", masked_lm_prob)
    check_fraction("short_seq_prob", short_seq_prob)
    if sentence_task not in SENTENCE_TASKS:
        raise ValueError(
            f"`sentence_task` must be one of {SENTENCE_TASKS}. "
            f"Received: sentence_task={sentence_task!r}"
        )
    for name, value in (
        ("dupe_factor", dupe_factor),
        ("document_buffer_size", document_buffer_size),
        ("instance_buffer_size", instance_buffer_size),
    ):
        check_positive_int(name, value)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an int >= 0. Received: seed={seed!r}")
    for name, value in (
        ("favor_shorter_ngram", favor_shorter_ngram),
        ("whole_word_masking", whole_word_masking),
        ("lowercase", lowercase),
    ):
        if not isinstance(value, bool):
            raise ValueError(f"`{name}` must be a bool. Received: {name}={value!r}")
    _check_documents(documents)
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    masker = NgramMasker(
        start_piece_table(pieces),
        masked_lm_prob=masked_lm_prob,
        max_predictions_per_seq=max_predictions_per_seq,
        max_ngram=max_ngram,
        favor_shorter_ngram=favor_shorter_ngram,
        whole_word_masking=whole_word_masking,
    )
    rng = np.random.default_rng(seed)
    factory = _InstanceFactory(
        masker, max_seq_length, short_seq_prob, sentence_task, dupe_factor, rng
    )
    tokenized = _tokenize(documents, processor, bool(lowercase))
    instances = _from_document_buffer(tokenized, factory, document_buffer_size, rng)
    return _shuffled(instances, instance_buffer_size, rng)


def _from_document_buffer(tokenized, factory, buffer_size, rng):
    """Processes documents in random order from a bounded buffer.

    The buffer is also the pool of "random other documents". At the end
    of the stream the remaining documents are processed in random order
    while all of them stay in the pool, so a corpus that fits the buffer
    is treated as the original treats the whole corpus.
    """
    buffer = []
    for document in tokenized:
        if len(buffer) < buffer_size:
            buffer.append(document)
            continue
        index = int(rng.integers(len(buffer)))
        yield from factory.from_document(index, buffer)
        buffer[index] = document
    if not buffer:
        raise ValueError(
            "`documents` holds no text: the corpus is empty or every "
            "sentence is empty after normalisation, so there is nothing to "
            "create instances from."
        )
    for index in rng.permutation(len(buffer)).tolist():
        yield from factory.from_document(index, buffer)


def _shuffled(items, buffer_size, rng):
    buffer = []
    for item in items:
        if len(buffer) < buffer_size:
            buffer.append(item)
            continue
        index = int(rng.integers(buffer_size))
        yield buffer[index]
        buffer[index] = item
    for index in rng.permutation(len(buffer)).tolist():
        yield buffer[index]


def truncation_counts(length_a, length_b, max_num_tokens):
    """Tokens Google's `truncate_seq_pair` removes from A and from B.

    It trims the longer segment (B on ties) one token at a time; only
    whether each token goes from the front or the back is random, so the
    counts are computed here and the ends drawn binomially.

    Example:
    >>> truncation_counts(10, 4, 8)
    (6, 0)
    >>> truncation_counts(5, 5, 7)
    (1, 2)
    """
    excess = length_a + length_b - max_num_tokens
    if excess <= 0:
        return 0, 0
    if length_a > length_b:
        # A shrinks to B's length, then B, A, B, ... alternate.
        first = min(length_a - length_b, excess)
        rest = excess - first
        return first + rest // 2, (rest + 1) // 2
    # B shrinks to one below A's length, then A, B, A, ... alternate.
    first = min(length_b - length_a + 1, excess)
    rest = excess - first
    return (rest + 1) // 2, first + rest // 2


class _InstanceFactory:
    """Google's `create_instances_from_document`, on arrays of ids."""

    def __init__(self, masker, max_seq_length, short_seq_prob, task, dupe, rng):
        self.masker = masker
        self.max_seq_length = max_seq_length
        self.max_predictions = masker.max_predictions_per_seq
        self.short_seq_prob = short_seq_prob
        self.task = task
        self.dupe = dupe
        self.rng = rng
        # [CLS] A [SEP] B [SEP], or [CLS] A [SEP] for MLM only.
        self.max_num_tokens = max_seq_length - (2 if task == "none" else 3)

    def from_document(self, index, pool):
        for _ in range(self.dupe):
            yield from self._segment_pairs(index, pool)

    def _segment_pairs(self, index, pool):
        rng = self.rng
        ids, offsets = pool[index]
        offsets = offsets.tolist()
        num_sentences = len(offsets) - 1
        target = self.max_num_tokens
        if rng.random() < self.short_seq_prob:
            target = int(rng.integers(2, self.max_num_tokens + 1))
        chunk_start, length, i = 0, 0, 0
        while i < num_sentences:
            length += offsets[i + 1] - offsets[i]
            if i == num_sentences - 1 or length >= target:
                size = i + 1 - chunk_start
                if self.task == "none":
                    a = ids[offsets[chunk_start] : offsets[i + 1]]
                    b, label = None, 0
                else:
                    a_end = chunk_start + 1
                    if size >= 2:
                        a_end = chunk_start + int(rng.integers(1, size))
                    a = ids[offsets[chunk_start] : offsets[a_end]]
                    if size == 1 or (self.task == "nsp" and rng.random() < 0.5):
                        b = self._random_segment(index, pool, target - a.size)
                        label = 1
                        # The unused sentences start the next chunk.
                        i = a_end - 1
                    else:
                        b = ids[offsets[a_end] : offsets[i + 1]]
                        label = 0
                        if self.task == "sop" and rng.random() < 0.5:
                            a, b, label = b, a, 1
                yield self._instance(a, b, label)
                chunk_start, length = i + 1, 0
            i += 1

    def _random_segment(self, index, pool, target_length):
        rng = self.rng
        # As the original: ten tries to avoid the document itself.
        for _ in range(10):
            other = int(rng.integers(len(pool)))
            if other != index:
                break
        ids, offsets = pool[other]
        start = int(rng.integers(offsets.size - 1))
        base = int(offsets[start])
        # Whole sentences from `start` until the target length is reached.
        end = int(np.searchsorted(offsets, base + target_length, side="left"))
        end = min(max(end, start + 1), offsets.size - 1)
        return ids[base : offsets[end]]

    def _instance(self, a, b, label):
        rng = self.rng
        length_b = 0 if b is None else b.size
        trim_a, trim_b = truncation_counts(a.size, length_b, self.max_num_tokens)
        if trim_a:
            front = int(rng.binomial(trim_a, 0.5))
            a = a[front : a.size - (trim_a - front)]
        if trim_b:
            front = int(rng.binomial(trim_b, 0.5))
            b = b[front : b.size - (trim_b - front)]
        length = a.size + 2 + (0 if b is None else b.size + 1)
        tokens = np.empty(length, np.int32)
        tokens[0] = CLS_ID
        tokens[1 : a.size + 1] = a
        tokens[a.size + 1] = SEP_ID
        if b is not None:
            tokens[a.size + 2 : -1] = b
            tokens[-1] = SEP_ID
        masked = self.masker(tokens, rng)

        sequence = self.max_seq_length
        input_ids = np.zeros(sequence, np.int32)
        input_ids[:length] = masked.token_ids
        input_mask = np.zeros(sequence, np.int32)
        input_mask[:length] = 1
        segment_ids = np.zeros(sequence, np.int32)
        if b is not None:
            segment_ids[a.size + 2 : length] = 1
        token_boundary = np.zeros(sequence, np.int32)
        token_boundary[:length] = masked.token_boundary
        count = masked.masked_lm_positions.size
        positions = np.zeros(self.max_predictions, np.int32)
        positions[:count] = masked.masked_lm_positions
        labels = np.zeros(self.max_predictions, np.int32)
        labels[:count] = masked.masked_lm_ids
        weights = np.zeros(self.max_predictions, np.float32)
        weights[:count] = 1.0
        return PretrainingInstance(
            input_ids,
            input_mask,
            segment_ids,
            token_boundary,
            positions,
            labels,
            weights,
            label,
        )
