"""Phrase counting of the tantivy ranking: its regex scans agree with counting tokens."""

from __future__ import annotations

import random

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
    "new\0york, NUL is not a token character",
    "\u212a is the Kelvin sign, lower-cased to ASCII k: new york",
    "york new york new york new",  # overlapping occurrences of "new york new"
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


def test_a_batch_is_counted_text_by_text() -> None:
    texts = [*TEXTS, "the last text ends with new", "york begins this one", *TEXTS]
    assert PhraseCounter(PHRASES).counts(texts) == [by_tokens(t, PHRASES) for t in texts]


def test_random_texts_and_phrases_count_as_tokens_do() -> None:
    rng = random.Random(7)
    words = ["a", "ab", "new", "york", "x" * 41, "Åb", "NEW"]
    separators = [" ", "  ", ", ", "_", "-\n", "\0", "é"]

    def text() -> str:
        return "".join(
            rng.choice(words) + rng.choice(separators) for _ in range(rng.randint(0, 30))
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
        assert PhraseCounter(phrases).counts(texts) == expected
