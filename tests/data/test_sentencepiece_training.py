import pytest
import sentencepiece

from keras_albert.data.sentencepiece_training import train_sentencepiece


def test_albert_ids_and_normalised_pieces():
    from tests.conftest import synthetic_sentences

    proto = train_sentencepiece(synthetic_sentences(500), vocabulary_size=60)
    processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
    assert [processor.id_to_piece(i) for i in range(5)] == [
        "<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]",
    ]
    assert processor.get_piece_size() == 60
    # Trained on lowercased text: no upper-case piece exists.
    pieces = [processor.id_to_piece(i) for i in range(5, 60)]
    assert all(piece == piece.lower() for piece in pieces)


def test_same_text_same_vocabulary():
    texts = ["the cat sat on the mat", "the dog ran in the park"] * 40
    assert train_sentencepiece(texts, 22) == train_sentencepiece(texts, 22)


@pytest.mark.parametrize(
    "vocabulary_size,message",
    [(8, "smaller than the number of distinct characters"), (500, "larger than")],
)
def test_vocabulary_size_out_of_range(vocabulary_size, message):
    with pytest.raises(ValueError, match=message):
        train_sentencepiece(["the cat sat", "the dog ran"] * 50, vocabulary_size)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(vocabulary_size=5), "vocabulary_size"),
        (dict(vocabulary_size=30, model_type="wordpiece"), "model_type"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        train_sentencepiece(["a b c"], **kwargs)


def test_non_string_items_are_rejected():
    with pytest.raises(ValueError, match="strings"):
        train_sentencepiece(["fine", 3], 20)
