"""A tokenized corpus file gives back its documents and the same instances."""

import numpy as np
import pytest

from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.pretraining_instances import tokenize_documents
from keras_albert.data.sentencepiece_training import train_sentencepiece
from keras_albert.data.tokenized_corpus import read_tokenized_corpus
from keras_albert.data.tokenized_corpus import write_tokenized_corpus
from tests.conftest import synthetic_sentences


@pytest.fixture(scope="module")
def corpus():
    sentences = synthetic_sentences(400)
    documents = [sentences[i:i + 8] for i in range(0, len(sentences), 8)]
    return documents, train_sentencepiece(sentences, 60)


def test_round_trip_gives_the_same_documents_and_instances(corpus, tmp_path):
    documents, proto = corpus
    tokenized = list(tokenize_documents(documents, proto))
    count, tokens = write_tokenized_corpus(tokenized, tmp_path / "corpus.npz", 60)
    assert count == len(tokenized) and tokens == sum(d.token_ids.size for d in tokenized)
    assert np.load(tmp_path / "corpus.npz")["token_ids"].dtype == np.int16
    back = read_tokenized_corpus(tmp_path / "corpus.npz", vocabulary_size=60)
    for a, b in zip(back, tokenized, strict=True):
        np.testing.assert_array_equal(a.token_ids, b.token_ids)
        np.testing.assert_array_equal(a.sentence_offsets, b.sentence_offsets)
    settings = dict(max_seq_length=24, max_predictions_per_seq=4, seed=5, dupe_factor=2)
    from_text = list(create_pretraining_instances(documents, proto, **settings))
    from_file = list(create_pretraining_instances(back, proto, **settings))
    assert len(from_text) == len(from_file) > 10
    for a, b in zip(from_text, from_file):
        for field in a._fields:
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_refusals_name_the_problem(corpus, tmp_path):
    documents, proto = corpus
    tokenized = list(tokenize_documents(documents[:3], proto))
    write_tokenized_corpus(tokenized, tmp_path / "corpus.npz", 60)
    with pytest.raises(ValueError, match="tokenized with a 60-piece vocabulary; this run's has 8000"):
        read_tokenized_corpus(tmp_path / "corpus.npz", vocabulary_size=8000)
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 10\)"):
        write_tokenized_corpus(tokenized, tmp_path / "small.npz", 10)
    with pytest.raises(ValueError, match="empty"):
        write_tokenized_corpus([], tmp_path / "empty.npz", 60)
    with pytest.raises(ValueError, match="must be a TokenizedDocument"):
        write_tokenized_corpus([["a sentence"]], tmp_path / "text.npz", 60)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.npz"]
