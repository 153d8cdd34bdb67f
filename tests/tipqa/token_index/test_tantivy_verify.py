"""Phrase counting of the tantivy ranking: its regex scans agree with counting tokens."""

from __future__ import annotations

import pytest

from tipqa.text import count_phrase, tokenize
from tipqa.token_index.tantivy_verify import TOKENIZED_FIRST, PhraseCounter

TEXTS = [
    "New York, new york city; NEW-YORK!",
    "york new york new york",
    "newyork is one token, new_york is not",
    "New " + "x" * 300 + " York",  # a run too long to be a token: dropped, so the two are adjacent
    "Ünïcode text: new york, Straße",
    "a" * 50 + " new york",
    "",
]
PHRASES = [("new", "york"), ("new", "york", "city"), ("york",), ("straße",), ("new", "york", "new")]


def by_tokens(text: str, phrases: list[tuple[str, ...]]) -> int:
    tokens = tokenize(text)
    return sum(count_phrase(tokens, phrase) for phrase in phrases)


@pytest.mark.parametrize("text", TEXTS)
def test_regex_counts_equal_token_counts(text: str) -> None:
    counter = PhraseCounter(PHRASES)
    for _ in range(TOKENIZED_FIRST):
        counter("warming up the counter to its regex path")
    assert counter(text) == by_tokens(text, PHRASES)


def test_a_counter_switches_to_regexes_and_keeps_counting_the_same() -> None:
    counter = PhraseCounter(PHRASES)
    counts = [counter(text) for text in TEXTS * 4]
    assert counts == [by_tokens(text, PHRASES) for text in TEXTS * 4]
