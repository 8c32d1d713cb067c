"""Documents, n-gram masking and pretraining instances (Google's recipe)."""

import random
import tracemalloc

import numpy as np
import pytest

from keras_albert.data.documents import read_documents
from keras_albert.data.documents import split_documents
from keras_albert.data.ngram_masking import CLS_ID
from keras_albert.data.ngram_masking import MASK_ID
from keras_albert.data.ngram_masking import SEP_ID
from keras_albert.data.ngram_masking import NgramMasker
from keras_albert.data.ngram_masking import is_start_piece
from keras_albert.data.ngram_masking import ngram_probabilities
from keras_albert.data.ngram_masking import num_to_predict
from keras_albert.data.ngram_masking import select_masked_words
from keras_albert.data.ngram_masking import start_piece_table
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.pretraining_instances import load_sentencepiece
from keras_albert.data.pretraining_instances import tokenize_documents
from keras_albert.data.pretraining_instances import truncation_counts
from tests.conftest import synthetic_sentences


def _documents(count=60, sentences=12, seed=0):
    texts = synthetic_sentences(count * sentences, seed=seed)
    return [texts[i : i + sentences] for i in range(0, len(texts), sentences)]


def _instances(proto, documents=None, **kwargs):
    kwargs.setdefault("max_seq_length", 64)
    kwargs.setdefault("max_predictions_per_seq", 10)
    documents = _documents() if documents is None else documents
    return list(create_pretraining_instances(documents, proto, **kwargs))


def _segments(instance):
    """(A, B) ids of an unmasked instance."""
    length = int(instance.input_mask.sum())
    ids = instance.input_ids[:length]
    first_sep = int(np.flatnonzero(ids == SEP_ID)[0])
    return tuple(ids[1:first_sep].tolist()), tuple(ids[first_sep + 1 : -1].tolist())


# --- documents -------------------------------------------------------------


def test_read_documents_blank_lines_separate_documents(tmp_path):
    (tmp_path / "a.txt").write_text("One.\nTwo.\n\n\nThree.\n")
    (tmp_path / "b.txt").write_text("Four.\n")
    documents = list(read_documents(str(tmp_path / "*.txt")))
    assert documents == [["One.", "Two."], ["Three."], ["Four."]]


def test_read_documents_one_file_per_document_split_by_punctuation(tmp_path):
    (tmp_path / "novel.txt").write_text(
        "Mr. Darcy came in. She\nsmiled!\n\nA new paragraph? Yes.\n"
    )
    documents = list(
        read_documents(
            tmp_path / "novel.txt",
            document_boundary="file",
            sentence_split="punctuation",
        )
    )
    assert documents == [
        ["Mr. Darcy came in.", "She smiled!", "A new paragraph?", "Yes."]
    ]
    assert split_documents("A b.\n\nC d.") == [["A b."], ["C d."]]


def test_read_documents_non_utf8_bytes(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line\ncaf\xe9 latin-1\n")
    with pytest.raises(ValueError, match=r"bad.txt, line 2: .*not valid utf-8"):
        list(read_documents(path))
    assert list(read_documents(path, errors="replace")) == [
        ["fine line", "caf\ufffd latin-1"]
    ]
    assert list(read_documents(path, errors="ignore"))[0][1] == "caf latin-1"


def test_read_documents_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        read_documents(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="document_boundary.*'page'"):
        read_documents(tmp_path, document_boundary="page")
    with pytest.raises(ValueError, match="errors.*'skip'"):
        read_documents(tmp_path, errors="skip")
    with pytest.raises(ValueError, match="paths"):
        read_documents([])


# --- n-gram masking --------------------------------------------------------


def test_start_piece_rule_is_googles():
    assert is_start_piece("▁the") and is_start_piece("<unk>")
    assert is_start_piece(".") and is_start_piece("9") and is_start_piece("'s")
    assert is_start_piece("é")  # non-English letters count as whole words
    assert not is_start_piece("ing") and not is_start_piece("s.")
    assert start_piece_table(["▁a", "b"]).tolist() == [True, False]


def test_num_to_predict_rounds_half_to_even_like_python():
    assert num_to_predict(50, 0.15, 20) == 8  # 7.5 -> 8
    assert num_to_predict(10, 0.15, 20) == 2  # 1.5 -> 2
    assert num_to_predict(30, 0.15, 20) == 4  # 4.5 -> 4
    assert num_to_predict(3, 0.15, 20) == 1
    assert num_to_predict(512, 0.15, 20) == 20


def test_select_masked_words_respects_budget_and_overlaps():
    rng = np.random.default_rng(0)
    for _ in range(200):
        sizes = rng.integers(1, 4, 40)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        budget = int(rng.integers(1, 20))
        spans = select_masked_words(
            offsets, rng.permutation(40).tolist(), rng.integers(1, 4, 40).tolist(),
            budget,
        )
        words = [w for first, end in spans for w in range(first, end)]
        assert len(words) == len(set(words))
        assert sum(offsets[e] - offsets[f] for f, e in spans) <= budget
        assert all(1 <= e - f <= 3 for f, e in spans)


def test_ngram_lengths_follow_one_over_n():
    # Spans are cut short near the budget and skipped on overlap, which
    # favours short spans; at a low masking rate the masked spans keep
    # the drawn 6/11, 3/11, 2/11.
    rng = np.random.default_rng(1)
    probabilities = ngram_probabilities(3)
    np.testing.assert_allclose(probabilities, [6 / 11, 3 / 11, 2 / 11])
    counts = np.zeros(4)
    for _ in range(40):
        sizes = rng.integers(1, 3, 4000)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        ngrams = rng.choice(3, 4000, p=probabilities) + 1
        spans = select_masked_words(
            offsets, rng.permutation(4000).tolist(), ngrams.tolist(), 300
        )
        for first, end in spans:
            counts[end - first] += 1
    shares = counts[1:] / counts.sum()
    np.testing.assert_allclose(shares, [6 / 11, 3 / 11, 2 / 11], atol=0.02)


def test_masker_whole_words_and_80_10_10():
    # Pieces: 5 "▁w" (starts a word), 6 "x" (continues it).
    table = np.array([True] * 5 + [True, False] + [True] * 93)
    masker = NgramMasker(table, masked_lm_prob=0.15, max_predictions_per_seq=40)
    tokens = np.array([CLS_ID] + [5, 6, 6] * 40 + [SEP_ID] + [5, 6] * 20 + [SEP_ID])
    rng = np.random.default_rng(0)
    outcome = {"mask": 0, "keep": 0, "other": 0}
    budget = num_to_predict(tokens.size, 0.15, 40)
    sizes = []
    for _ in range(300):
        out = masker(tokens, rng)
        positions = out.masked_lm_positions
        sizes.append(positions.size)
        assert positions.size <= budget
        assert np.all(np.diff(positions) > 0)
        np.testing.assert_array_equal(out.masked_lm_ids, tokens[positions])
        assert not np.isin(tokens[positions], [CLS_ID, SEP_ID]).any()
        # Whole words: a masked continuation piece has its word start masked.
        masked = np.zeros(tokens.size, bool)
        masked[positions] = True
        for p in positions[tokens[positions] == 6]:
            start = p
            while tokens[start] == 6 and tokens[start - 1] != SEP_ID:
                start -= 1
            assert masked[start:p].all()
        new = out.token_ids[positions]
        outcome["mask"] += int((new == MASK_ID).sum())
        outcome["keep"] += int((new == tokens[positions]).sum())
        outcome["other"] += int(((new != MASK_ID) & (new != tokens[positions])).sum())
    # Words of 2 and 3 pieces: the last piece of budget may stay unused.
    assert np.mean(sizes) > budget - 1
    total = sum(outcome.values())
    assert abs(outcome["mask"] / total - 0.8) < 0.02
    # Random ids hit the original sometimes (1 in 100 here).
    assert abs(outcome["keep"] / total - 0.1) < 0.02
    assert abs(outcome["other"] / total - 0.1) < 0.02


# --- instances -------------------------------------------------------------


def test_instances_shapes_dtypes_and_special_tokens(sentencepiece_proto):
    instances = _instances(sentencepiece_proto)
    assert len(instances) > 100
    for instance in instances:
        for name in ("input_ids", "input_mask", "segment_ids", "token_boundary"):
            value = getattr(instance, name)
            assert value.shape == (64,) and value.dtype == np.int32
        for name in ("masked_lm_positions", "masked_lm_ids"):
            assert getattr(instance, name).shape == (10,)
        assert instance.masked_lm_weights.dtype == np.float32
        length = int(instance.input_mask.sum())
        assert instance.input_mask[:length].all()
        assert not instance.input_ids[length:].any()
        real = instance.masked_lm_weights > 0
        positions = instance.masked_lm_positions[real]
        # Random replacements may be any id, specials included (as the
        # original draws from the whole vocabulary): look at the rest.
        ids = instance.input_ids[:length].copy()
        ids[positions] = instance.masked_lm_ids[real]
        assert ids[0] == CLS_ID and ids[-1] == SEP_ID and (ids == SEP_ID).sum() == 2
        assert np.all((positions > 0) & (positions < length - 1))
        assert not np.isin(instance.masked_lm_ids[real], [0, CLS_ID, SEP_ID]).any()
        assert not instance.masked_lm_positions[~real].any()
        budget = num_to_predict(length, 0.15, 10)
        assert real.sum() <= budget
        # Segment B is the span after the first [SEP].
        first_sep = int(np.flatnonzero(ids == SEP_ID)[0])
        assert not instance.segment_ids[: first_sep + 1].any()
        assert instance.segment_ids[first_sep + 1 : length].all()
        assert instance.token_boundary[[0, first_sep]].tolist() == [1, 1]


def test_masking_rate_and_full_sequences(sentencepiece_proto):
    instances = _instances(sentencepiece_proto, short_seq_prob=0.0)
    lengths = np.array([i.input_mask.sum() for i in instances])
    predicted = np.array([i.masked_lm_weights.sum() for i in instances])
    assert abs(predicted.sum() / lengths.sum() - 0.15) < 0.01
    # Chunks fill the sequence except at the end of a document.
    assert np.median(lengths) >= 60


def test_sop_pairs_are_in_or_out_of_order_half_the_time(sentencepiece_proto):
    documents = _documents(count=600, sentences=2)
    sp = load_sentencepiece(sentencepiece_proto)
    sentences = {
        tuple(sp.encode(s.lower())): (d, i)
        for d, doc in enumerate(documents)
        for i, s in enumerate(doc)
    }
    instances = _instances(
        sentencepiece_proto,
        documents,
        masked_lm_prob=0.0,
        short_seq_prob=0.0,
        dupe_factor=2,
    )
    labels = np.array([i.next_sentence_labels for i in instances])
    assert len(labels) == 1200
    assert abs(labels.mean() - 0.5) < 4 * 0.5 / np.sqrt(len(labels))
    for instance in instances:
        a, b = _segments(instance)
        (doc_a, index_a), (doc_b, index_b) = sentences[a], sentences[b]
        assert doc_a == doc_b
        assert index_b - index_a == (-1 if instance.next_sentence_labels else 1)


def test_nsp_negatives_come_from_other_documents(sentencepiece_proto):
    documents = _documents(count=300, sentences=2)
    sp = load_sentencepiece(sentencepiece_proto)
    owner = {}
    for d, doc in enumerate(documents):
        for s in doc:
            owner.setdefault(tuple(sp.encode(s.lower())), set()).add(d)
    instances = _instances(
        sentencepiece_proto, documents, masked_lm_prob=0.0, sentence_task="nsp"
    )
    labels = np.array([i.next_sentence_labels for i in instances])
    assert 0.4 < labels.mean() < 0.75  # unused sentences come back as new A's
    for instance in instances:
        a, b = _segments(instance)
        first_b = next(t for t in owner if b[: len(t)] == t)
        if instance.next_sentence_labels == 0:
            assert owner[a] & owner[first_b]
        else:
            assert not owner[a] <= owner[first_b]


def test_mlm_only_instances_are_single_segments(sentencepiece_proto):
    instances = _instances(
        sentencepiece_proto, sentence_task="none", masked_lm_prob=0.0
    )
    for instance in instances:
        length = int(instance.input_mask.sum())
        assert (instance.input_ids[:length] == SEP_ID).sum() == 1
        assert instance.input_ids[length - 1] == SEP_ID
        assert not instance.segment_ids.any() and instance.next_sentence_labels == 0


def test_long_sentences_are_truncated_to_max_seq_length(sentencepiece_proto):
    long_sentence = " ".join(synthetic_sentences(40, seed=3))
    instances = _instances(sentencepiece_proto, [[long_sentence] * 3] * 4)
    assert all(i.input_mask.sum() <= 64 for i in instances)
    assert max(i.input_mask.sum() for i in instances) == 64


def test_truncation_counts_match_googles_token_by_token_loop():
    for length_a in range(0, 14):
        for length_b in range(0, 14):
            for limit in range(2, 20):
                a, b = length_a, length_b
                trimmed = [0, 0]
                while a + b > limit:
                    if a > b:
                        a, trimmed[0] = a - 1, trimmed[0] + 1
                    else:
                        b, trimmed[1] = b - 1, trimmed[1] + 1
                assert truncation_counts(length_a, length_b, limit) == tuple(trimmed)


def test_same_seed_same_instances_other_seed_differs(sentencepiece_proto):
    first = _instances(sentencepiece_proto, seed=7)
    again = _instances(sentencepiece_proto, seed=7)
    other = _instances(sentencepiece_proto, seed=8)
    assert len(first) == len(again)
    for x, y in zip(first, again):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    assert any(
        not np.array_equal(x.input_ids, y.input_ids) for x, y in zip(first, other)
    )


def test_documents_with_one_sentence_pair_with_other_documents(sentencepiece_proto):
    # Documented handling (as the original): B comes from another document.
    documents = [[s] for s in synthetic_sentences(50)]
    instances = _instances(sentencepiece_proto, documents, masked_lm_prob=0.0)
    assert len(instances) == 50
    assert all(i.next_sentence_labels == 1 for i in instances)
    assert all(all(_segments(i)) for i in instances)
    # A corpus of one single-sentence document pairs it with itself.
    (only,) = _instances(sentencepiece_proto, [["the cat sleeps."]])
    assert only.next_sentence_labels == 1 and only.input_mask.sum() > 4


def test_memory_stays_flat_as_the_corpus_grows(sentencepiece_proto):
    def peak(num_documents):
        def documents():
            rng = random.Random(0)
            words = "the cat dog sees a big red house by river".split()
            for _ in range(num_documents):
                yield [
                    " ".join(rng.choice(words) for _ in range(8)) + "."
                    for _ in range(10)
                ]

        tracemalloc.start()
        count = 0
        for _ in create_pretraining_instances(
            documents(),
            sentencepiece_proto,
            max_seq_length=64,
            max_predictions_per_seq=10,
            document_buffer_size=20,
            instance_buffer_size=50,
        ):
            count += 1
        peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return count, peak_bytes

    small_count, small_peak = peak(100)
    large_count, large_peak = peak(800)
    assert large_count > 6 * small_count
    assert large_peak < 1.5 * small_peak


def test_empty_corpus_is_a_clear_error(sentencepiece_proto):
    for documents in ([], [[], ["", "   "]]):
        with pytest.raises(ValueError, match="holds no text"):
            _instances(sentencepiece_proto, documents)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_seq_length": 7}, r"max_seq_length` must be an int >= 8.*=7"),
        ({"max_seq_length": 64.0}, r"max_seq_length.*64.0"),
        ({"max_predictions_per_seq": 0}, r"max_predictions_per_seq.*=0"),
        (
            {"max_predictions_per_seq": 65, "max_seq_length": 64},
            r"<= `max_seq_length`.*65",
        ),
        ({"masked_lm_prob": 1.5}, r"masked_lm_prob` must be a float in \[0, 1\].*1.5"),
        ({"short_seq_prob": -0.1}, r"short_seq_prob.*-0.1"),
        ({"sentence_task": "nsp+sop"}, r"sentence_task` must be one of.*'nsp\+sop'"),
        ({"dupe_factor": 0}, r"dupe_factor.*=0"),
        ({"seed": -1}, r"seed` must be an int >= 0.*-1"),
        ({"max_ngram": 0}, r"max_ngram.*=0"),
        ({"lowercase": "yes"}, r"lowercase` must be a bool.*'yes'"),
    ],
)
def test_bad_arguments_name_argument_and_value(sentencepiece_proto, kwargs, message):
    with pytest.raises(ValueError, match=message):
        create_pretraining_instances(_documents(count=2), sentencepiece_proto, **kwargs)


def test_bad_documents_and_vocabularies(sentencepiece_proto):
    import sentencepiece

    with pytest.raises(ValueError, match="`documents` must be an iterable"):
        create_pretraining_instances("just a string", sentencepiece_proto)
    with pytest.raises(ValueError, match=r"documents\[1\]` must be a list"):
        _instances(sentencepiece_proto, [["fine."], "not a list"])
    with pytest.raises(ValueError, match=r"documents\[0\]` must hold only str.*int"):
        _instances(sentencepiece_proto, [["fine.", 3]])
    with pytest.raises(ValueError, match="not a valid SentencePiece model"):
        create_pretraining_instances(_documents(count=2), b"not a model")
    with pytest.raises(FileNotFoundError, match="nowhere.model"):
        create_pretraining_instances(_documents(count=2), "nowhere.model")
    # A vocabulary without ALBERT's special ids.
    import io

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(synthetic_sentences(500)),
        model_writer=model,
        vocab_size=60,
        minloglevel=2,
    )
    with pytest.raises(ValueError, match=r"ALBERT vocabulary.*\[CLS\]"):
        create_pretraining_instances(_documents(count=2), model.getvalue())


def test_tokenize_documents_drops_empty_sentences(sentencepiece_proto):
    documents = [["The cat.", "  ", "A dog!"]]
    (document,) = tokenize_documents(documents, sentencepiece_proto)
    assert document.sentence_offsets.size == 3
    assert document.token_ids.dtype == np.int32
    assert document.sentence_offsets[-1] == document.token_ids.size


def test_ascii_fast_path_normalizes_like_normalize_text():
    from keras_albert.data.pretraining_instances import _normalize
    from keras_albert.utils.text_normalization import normalize_text

    for text in (
        "  The  ``Cat''\tsat.\x1c\n",
        "MIXED Case\x0bline\x0c",
        "Café  Naïve ``x''",
        "",
    ):
        for lowercase in (True, False):
            assert _normalize(text, lowercase) == normalize_text(text, lowercase)


def test_dupe_factor_makes_more_instances_with_new_masks(sentencepiece_proto):
    documents = _documents(count=20)
    once = _instances(sentencepiece_proto, documents, instance_buffer_size=1)
    thrice = _instances(
        sentencepiece_proto, documents, dupe_factor=3, instance_buffer_size=1
    )
    assert 2.5 * len(once) < len(thrice) < 3.5 * len(once)
