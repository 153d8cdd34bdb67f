"""Phrase counting of the tantivy ranking: its scans of ASCII text agree with counting tokens."""

from __future__ import annotations

import random

import pytest

from tipqa.core.text import count_phrase, tokenize
from tipqa.indexes.token_index.tantivy_verify import PhraseCounter

TEXTS = [
    "New York, new york city; NEW-YORK!",
    "york new york new york",
    "newyork is one token, new_york is not",
    "New " + "x" * 300 + " York",  # a run too long to be a token: dropped, so the two are adjacent
    "Ünïcode text: new york, Straße",
    "a" * 50 + " new york",
    "",
    "new\0york, NUL is not a token character",
    "\u212a is the Kelvin sign, lower-cased to ASCII k: new york",
    "york new york new york new",  # overlapping occurrences of "new york new"
]
PHRASES = [("new", "york"), ("new", "york", "city"), ("york",), ("straße",), ("new", "york", "new")]


def by_tokens(text: str, phrases: list[tuple[str, ...]]) -> int:
    tokens = tokenize(text)
    return sum(count_phrase(tokens, phrase) for phrase in phrases)


@pytest.mark.parametrize("text", TEXTS)
def test_scans_count_as_tokens_do(text: str) -> None:
    assert PhraseCounter(PHRASES)(text.encode()) == by_tokens(text, PHRASES)
    ascii_phrases = [p for p in PHRASES if all(t.isascii() for t in p)]
    for phrases in (PHRASES, ascii_phrases):
        each = [by_tokens(text, [phrase]) for phrase in phrases]
        assert PhraseCounter(phrases).each(text.encode()) == each


def test_random_texts_and_phrases_count_as_tokens_do() -> None:
    rng = random.Random(7)
    words = ["a", "ab", "new", "york", "x" * 41, "Åb", "NEW"]
    separators = [" ", "  ", ", ", "_", "-\n", "\0", "é", "x" * 45 + " "]

    def text() -> str:
        ascii_only = rng.random() < 0.7  # most texts take the scan, not the tokenizer
        chosen_words = [w for w in words if w.isascii() or not ascii_only]
        chosen_separators = [s for s in separators if s.isascii() or not ascii_only]
        return "".join(
            rng.choice(chosen_words) + rng.choice(chosen_separators)
            for _ in range(rng.randint(0, 30))
        )

    for _ in range(40):
        phrases = list(
            {
                tuple(tokenize(" ".join(rng.choices(words[:4], k=rng.randint(1, 3)))))
                for _ in range(3)
            }
        )
        texts = [text() for _ in range(rng.randint(1, 25))]
        expected = [by_tokens(t, phrases) for t in texts]
        counter = PhraseCounter(phrases)
        assert [counter(t.encode()) for t in texts] == expected
        each = [[by_tokens(t, [phrase]) for phrase in phrases] for t in texts]
        assert [counter.each(t.encode()) for t in texts] == each
