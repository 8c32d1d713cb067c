"""Documentation paragraphs to the sentences that read as English."""

import pytest

from keras_albert.data.prose_sentences import is_prose
from keras_albert.data.prose_sentences import prose_sentences_of


@pytest.mark.parametrize("sentence, expected", [
    ("The cat sat down on the mat.", True),
    ("Too short here.", False),
    ("$ git log -p -- a.c b.c 1 2 3", False),
    ("Run git log -p to see each patch.", True),
])
def test_is_prose(sentence, expected):
    assert is_prose(sentence) is expected


def test_prose_sentences_of_keeps_order_and_drops_code():
    paragraphs = ["APT is a vast project. It is based on a library of code.", "ls -la /tmp 1 2 3", "Done."]
    assert prose_sentences_of(paragraphs) == ["APT is a vast project.", "It is based on a library of code."]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="`paragraphs` must be a list of strings"):
        prose_sentences_of("one paragraph")
    with pytest.raises(ValueError, match="`sentence` must be a string"):
        is_prose(None)
