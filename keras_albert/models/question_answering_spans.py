"""Contexts -> overlapping windows of pieces, and predicted spans -> text.

Every piece is traced to a *word* of the original context, and a word to
its exact character span, so an answer is always `context[start:end]` of
the text the user gave: accents, combining marks and CJK survive whatever
the tokenizer's normalisation does. Words are runs of letters and digits
(with their combining marks); each punctuation mark and each CJK character
is a word of its own, so answers can start or end next to them.
"""

import dataclasses
import unicodedata

import numpy as np

_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),
    (0x20000, 0x2FA1F),
)


def _is_cjk(char):
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _stands_alone(char):
    category = unicodedata.category(char)
    return _is_cjk(char) or category.startswith("P") or category.startswith("S")


def split_words(text):
    """[(start, end)] character spans of the words of `text`."""
    spans, start = [], None
    for index, char in enumerate(text):
        if char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zs"):
            if start is not None:
                spans.append((start, index))
                start = None
        elif _stands_alone(char):
            if start is not None:
                spans.append((start, index))
                start = None
            spans.append((index, index + 1))
        elif start is None:
            start = index
    if start is not None:
        spans.append((start, len(text)))
    return spans


@dataclasses.dataclass
class QuestionWindows:
    """Model inputs for every window, and how to map positions back."""

    features: dict  # token_ids, segment_ids, padding_mask: [windows, sequence]
    start_positions: np.ndarray  # [windows] labels (0 = [CLS]: no answer here)
    end_positions: np.ndarray
    example_index: np.ndarray  # [windows] -> example
    position_word: np.ndarray  # [windows, sequence] -> word, -1 off context
    max_context: np.ndarray  # [windows, sequence] bool: best window for this piece
    word_spans: list  # per example: [(start, end)] in the context
    contexts: list


def _answer_words(spans, answer_start, answer_text, context, where):
    end = answer_start + len(answer_text)
    if context[answer_start:end] != answer_text:
        raise ValueError(
            f"{where}: answer_start={answer_start} does not point at the "
            f"answer text {answer_text!r} (the context has "
            f"{context[answer_start:end]!r} there)."
        )
    words = [i for i, (s, e) in enumerate(spans) if s < end and e > answer_start]
    if not words:
        raise ValueError(f"{where}: the answer {answer_text!r} covers no word.")
    return words[0], words[-1]


def _max_context(window_starts, length, total):
    """[windows, length] True where the window gives a piece most context."""
    best = np.zeros((len(window_starts), length), bool)
    score = np.full(total, -1.0)
    owner = np.zeros(total, int)
    for w, start in enumerate(window_starts):
        for offset in range(min(length, total - start)):
            position = start + offset
            left, right = offset, min(length, total - start) - offset - 1
            value = min(left, right) + 0.01 * length
            if value > score[position]:
                score[position], owner[position] = value, w
    for w, start in enumerate(window_starts):
        for offset in range(min(length, total - start)):
            best[w, offset] = owner[start + offset] == w
    return best


def build_windows(
    tokenizer,
    questions,
    contexts,
    answers=None,
    sequence_length=384,
    doc_stride=128,
    max_question_length=64,
):
    """Tokenizes and windows (question, context) pairs.

    `answers`, for training, holds per example `None` (no answer, SQuAD v2)
    or `(answer_text, answer_start)`. A window that does not hold the whole
    answer is labelled with [CLS] (position 0), as Google's run_squad does.
    """
    if len(questions) != len(contexts):
        raise ValueError(
            f"`questions` and `contexts` must have the same length; got "
            f"{len(questions)} and {len(contexts)}."
        )
    if answers is not None and len(answers) != len(contexts):
        raise ValueError(
            f"`answers` must have one entry per context; got {len(answers)} "
            f"for {len(contexts)} contexts."
        )
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    rows = {name: [] for name in ("ids", "segments", "mask", "words", "best")}
    starts, ends, owners, all_spans = [], [], [], []
    question_ids = tokenizer.tokenize(list(questions)) if questions else []
    for index, (question, context) in enumerate(zip(questions, contexts)):
        spans = split_words(context)
        all_spans.append(spans)
        word_pieces = tokenizer.tokenize([context[s:e] for s, e in spans]) if spans else []
        pieces, piece_word = [], []
        for word, ids in enumerate(word_pieces):
            pieces += list(ids)
            piece_word += [word] * len(ids)
        first_piece = {}
        last_piece = {}
        for position, word in enumerate(piece_word):
            first_piece.setdefault(word, position)
            last_piece[word] = position
        answer = None
        if answers is not None and answers[index] is not None:
            text, start = answers[index]
            first, last = _answer_words(spans, start, text, context, f"example {index}")
            if first in first_piece and last in last_piece:
                answer = (first_piece[first], last_piece[last])
        q = list(question_ids[index])[:max_question_length]
        room = sequence_length - len(q) - 3
        if room < 1:
            raise ValueError(
                f"sequence_length={sequence_length} leaves no room for the "
                f"context after a {len(q)}-piece question; raise it or lower "
                "max_question_length."
            )
        window_starts = [0]
        while window_starts[-1] + room < len(pieces):
            window_starts.append(window_starts[-1] + min(doc_stride, room))
        best = _max_context(window_starts, room, len(pieces))
        offset = len(q) + 2
        for w, window_start in enumerate(window_starts):
            chunk = pieces[window_start : window_start + room]
            ids = [cls] + q + [sep] + chunk + [sep]
            padding = sequence_length - len(ids)
            rows["ids"].append(ids + [pad] * padding)
            rows["segments"].append([0] * offset + [1] * (len(chunk) + 1) + [0] * padding)
            rows["mask"].append([1] * len(ids) + [0] * padding)
            words = np.full(sequence_length, -1)
            words[offset : offset + len(chunk)] = piece_word[window_start : window_start + len(chunk)]
            rows["words"].append(words)
            flags = np.zeros(sequence_length, bool)
            flags[offset : offset + len(chunk)] = best[w, : len(chunk)]
            rows["best"].append(flags)
            label = (0, 0)
            if answer and window_start <= answer[0] and answer[1] < window_start + room:
                label = (answer[0] - window_start + offset, answer[1] - window_start + offset)
            starts.append(label[0])
            ends.append(label[1])
            owners.append(index)
    return QuestionWindows(
        features={
            "token_ids": np.asarray(rows["ids"], "int32").reshape(-1, sequence_length),
            "segment_ids": np.asarray(rows["segments"], "int32").reshape(-1, sequence_length),
            "padding_mask": np.asarray(rows["mask"], "int32").reshape(-1, sequence_length),
        },
        start_positions=np.asarray(starts, "int32"),
        end_positions=np.asarray(ends, "int32"),
        example_index=np.asarray(owners, "int32"),
        position_word=np.asarray(rows["words"], "int64").reshape(-1, sequence_length),
        max_context=np.asarray(rows["best"], bool).reshape(-1, sequence_length),
        word_spans=all_spans,
        contexts=list(contexts),
    )


def best_answers(
    windows,
    start_logits,
    end_logits,
    n_best=20,
    max_answer_length=30,
    allow_no_answer=False,
    null_threshold=0.0,
):
    """Per example: {"text", "start", "end", "score", "n_best"}.

    Spans are scored `start_logit + end_logit` over every window, a piece
    counting only in the window that gives it most context. With
    `allow_no_answer` (SQuAD v2) the answer is "" when the [CLS] score beats
    the best span by more than `null_threshold`.
    """
    results = []
    for example, context in enumerate(windows.contexts):
        spans = windows.word_spans[example]
        candidates, null_score = {}, np.inf
        for w in np.flatnonzero(windows.example_index == example):
            starts_, ends_ = start_logits[w], end_logits[w]
            null_score = min(null_score, float(starts_[0] + ends_[0]))
            valid = np.flatnonzero(windows.position_word[w] >= 0)
            if not len(valid):
                continue
            top_starts = valid[np.argsort(-starts_[valid])][:n_best]
            top_ends = valid[np.argsort(-ends_[valid])][:n_best]
            for s in top_starts:
                if not windows.max_context[w, s]:
                    continue
                for e in top_ends:
                    if e < s or e - s + 1 > max_answer_length:
                        continue
                    first = spans[windows.position_word[w, s]][0]
                    last = spans[windows.position_word[w, e]][1]
                    score = float(starts_[s] + ends_[e])
                    if score > candidates.get((first, last), -np.inf):
                        candidates[(first, last)] = score
        ranked = sorted(candidates.items(), key=lambda item: -item[1])[:n_best]
        n_best_list = [
            {"text": context[a:b], "start": a, "end": b, "score": score}
            for (a, b), score in ranked
        ]
        best = n_best_list[0] if n_best_list else {"text": "", "start": 0, "end": 0, "score": -np.inf}
        if allow_no_answer and (not n_best_list or null_score - best["score"] > null_threshold):
            best = {"text": "", "start": 0, "end": 0, "score": null_score}
        results.append(dict(best, n_best=n_best_list, null_score=null_score))
    return results
