"""Texts given one a line (a `--texts` file, standard input, a flag's file)."""


def text_lines(data, flag, where):
    """The non-blank lines of UTF-8 `data` (bytes), stripped.

    Lines end at "\\n" ("\\r\\n" too), not at the other breaks `splitlines`
    knows (U+2028 inside a text is part of it); a leading BOM is dropped.
    `flag` and `where` (a quoted path, "standard input") name the source in
    the one-line errors.

    Example:
    >>> text_lines("\\ufeffone\\r\\n\\n two \\u2028 more\\n".encode(), "--texts", "'x.txt'")
    ['one', 'two \\u2028 more']
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"`{flag}` {where} is not UTF-8 text ({error.reason} at byte {error.start}); "
            "save it as UTF-8, one text per line."
        ) from None
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        raise ValueError(f"`{flag}` {where} holds no text: every line is blank.")
    return lines
