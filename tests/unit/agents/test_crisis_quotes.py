"""Quoted words: the quotation marks a message's view no longer has, found in it again."""

from __future__ import annotations

import pytest

from agents.safety.normalise import normalise
from agents.safety.quotes import Quotes


def _quoted(text: str) -> list[str]:
    quotes = Quotes(text, normalise(text))
    return [quotes.view[start:end] for start, end in quotes.spans]


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("我妈总说“我活够了”「早点去陪你爸」", ["我活够了", "早点去陪你爸"]),
        (
            'He said "Maybe you\'d all be better off without me" and laughed.',
            ["maybe youd all be better off without me"],
        ),
        # The same words outside and inside the quotation: the quoted ones.
        ("我说好累，她也说“好累”", ["好累"]),
        ("she said 'i'm fine' and left", []),  # single quotes are apostrophes too often
        ("no quotation here", []),
    ],
)
def test_quoted_words_are_found_in_the_view(text: str, quoted: list[str]) -> None:
    assert _quoted(text) == quoted


def test_the_quoted_spans_are_where_the_view_holds_them() -> None:
    text = "我说好累，她也说“好累”"
    quotes = Quotes(text, normalise(text))
    ((start, end),) = quotes.spans
    assert quotes.view.index("她也说") < start  # not the speaker's own 好累 before it
    assert quotes.view[start:end] == "好累"
