"""Sentences of documentation prose, without the code left in running text.

The readers of HTML and POD documentation (`html_text`, `pod_text`) give
paragraphs; this splits them into sentences and keeps those that read as
English: documentation mixes in command lines, option names and numbers
that teach a language model nothing about sentence order.
"""

import re

from keras_albert.datasets.austen import split_sentences

# A word-like token holds two letters in a row.
_WORD = re.compile(r"[A-Za-z]{2,}")
MIN_WORDS = 4
MIN_WORDLIKE_SHARE = 0.6


def is_prose(sentence):
    """True for a sentence of at least 4 words, at least 60 % of them words.

    Example:
    >>> is_prose("The cat sat down on the mat."), is_prose("$ git log -p -- a.c b.c")
    (True, False)
    """
    if not isinstance(sentence, str):
        raise ValueError(f"`sentence` must be a string. Received: sentence={sentence!r}")
    words = sentence.split()
    wordlike = sum(bool(_WORD.search(word)) for word in words)
    return len(words) >= MIN_WORDS and wordlike >= MIN_WORDLIKE_SHARE * len(words)


def prose_sentences_of(paragraphs):
    """The prose sentences of `paragraphs`, in order, for one document.

    Example:
    >>> prose_sentences_of(["The cat sat down.  It was tired of the day.", "ls -la /tmp"])
    ['The cat sat down.', 'It was tired of the day.']
    """
    if isinstance(paragraphs, str):
        raise ValueError(
            "`paragraphs` must be a list of strings, not one string. "
            f"Received: paragraphs={paragraphs[:80]!r}"
        )
    return [
        sentence
        for paragraph in paragraphs
        for sentence in split_sentences(paragraph)
        if is_prose(sentence)
    ]
