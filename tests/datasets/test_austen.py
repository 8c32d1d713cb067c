import pytest

from keras_albert import datasets


def test_six_novels_with_real_paragraphs():
    for name in datasets.AUSTEN_NOVELS:
        paragraphs = datasets.load_austen_novel(name)
        assert len(paragraphs) > 500
        assert all(p.strip() == p and p for p in paragraphs)
        assert not any(p.startswith("CHAPTER") for p in paragraphs)
    assert datasets.load_austen_novel("emma")[0].startswith("Emma Woodhouse, handsome")
    assert datasets.load_austen_novel("prideprejudice")[0].startswith(
        "It is a truth universally acknowledged"
    )


def test_persuasion_is_held_out_by_default():
    documents = datasets.load_austen_documents()
    assert len(documents) == 5
    # Short lines ("Yes.") recur across novels; long paragraphs do not.
    persuasion = {p for p in datasets.load_austen_novel("persuasion") if len(p) > 80}
    assert not any(paragraph in persuasion for doc in documents for paragraph in doc)
    assert len(datasets.load_austen_documents(exclude=())) == 6


def test_documents_as_sentences_keep_order():
    (emma,) = datasets.load_austen_documents(names=["emma"], sentences=True)
    assert emma[0].startswith("Emma Woodhouse")
    assert emma[1].startswith("She was the youngest")
    assert len(emma) > len(datasets.load_austen_novel("emma"))


@pytest.mark.parametrize(
    "paragraph,expected",
    [
        ("Mr. Knightley came. She smiled!", ["Mr. Knightley came.", "She smiled!"]),
        ('"Oh!" said Mrs. Weston. It was late.', ['"Oh!" said Mrs. Weston.', "It was late."]),
        ("Was it? \"Yes,\" she said.", ["Was it?", '"Yes," she said.']),
        ("one sentence only", ["one sentence only"]),
    ],
)
def test_split_sentences(paragraph, expected):
    assert datasets.split_sentences(paragraph) == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda: datasets.load_austen_novel("ulysses"),
        lambda: datasets.load_austen_documents(names=["emma", "middlemarch"]),
        lambda: datasets.load_austen_documents(exclude=["dracula"]),
    ],
)
def test_unknown_novel_names_the_accepted_ones(call):
    with pytest.raises(ValueError, match="Accepted: .*persuasion"):
        call()
