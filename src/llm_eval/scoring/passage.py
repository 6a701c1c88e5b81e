"""The passage a question asks about, found by the question's structure.

A Greek task quotes its message in «…» and asks about it after the quote, or sets the
message out as paragraphs and asks in the last one. Short quotes inside the message (a play's
title, a shop's name, a quoted rule) are part of the passage, not the passage itself.
"""

from __future__ import annotations

from functools import lru_cache

_PAIRS = {"«": "»", "“": "”"}
_PASSAGE_SHARE = 0.5
"""A quote holding at least this share of the question is its passage; a shorter one is a
quote inside the passage."""


def quoted_spans(question: str) -> list[str]:
    """The outermost quoted spans of `question`, nested quotes kept inside their span.

    «…» and “…” nest; a straight `"` closes the span it opened. An unclosed span runs to the
    end of the question.
    """
    spans: list[str] = []
    stack: list[str] = []
    start = 0
    for index, char in enumerate(question):
        if stack and char == stack[-1]:
            stack.pop()
            if not stack:
                spans.append(question[start:index])
        elif char in _PAIRS or char == '"':
            if not stack:
                start = index + 1
            stack.append(_PAIRS.get(char, '"'))
    if stack:
        spans.append(question[start:])
    return spans


@lru_cache(maxsize=4096)
def passage_text(question: str) -> str:
    """The longest outermost quote when it is most of the question; otherwise the question
    before its last paragraph (the ask), or the whole question when it has one paragraph."""
    longest = max(quoted_spans(question), key=len, default="")
    if len(longest.strip()) >= _PASSAGE_SHARE * len(question.strip()):
        return longest
    body, _, ask = question.strip().rpartition("\n\n")
    return body if body and ask else question
