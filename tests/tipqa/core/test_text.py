"""Tokens, phrases, paragraphs, sentences and words as every backend sees them."""

from __future__ import annotations

from tipqa.core.text import (
    MAX_TOKEN_CHARS,
    contains_phrase,
    count_phrase,
    paragraph_spans,
    split_paragraphs,
    split_sentences,
    tokenize,
    word_count,
)


def test_tokenize_lowercases_and_splits_on_non_alphanumerics() -> None:
    assert tokenize("Don't STOP_me: Café-au-lait, 3.14!") == [
        "don", "t", "stop", "me", "café", "au", "lait", "3", "14",
    ]  # fmt: skip


def test_tokenize_drops_overlong_tokens() -> None:
    keep, drop = "y" * MAX_TOKEN_CHARS, "x" * (MAX_TOKEN_CHARS + 1)
    assert tokenize(f"a {drop} {keep} b") == ["a", keep, "b"]


def test_tokenize_empty() -> None:
    assert tokenize("") == [] and tokenize(" -- ") == []


def test_count_phrase_counts_overlapping_occurrences() -> None:
    assert count_phrase(["a", "a", "a"], ["a", "a"]) == 2
    assert count_phrase(tokenize("la la la la"), ["la", "la", "la"]) == 2
    assert count_phrase(tokenize("new york new york"), tokenize("New York")) == 2


def test_count_phrase_edges() -> None:
    assert count_phrase(["a"], []) == 0
    assert count_phrase(["a"], ["a", "b"]) == 0
    assert count_phrase(("x", "y", "z"), ("y", "z")) == 1
    assert count_phrase(["b", "a"], ["a", "b"]) == 0
    assert contains_phrase(tokenize("the Prime Minister spoke"), ["prime", "minister"])
    assert not contains_phrase(tokenize("prime time minister"), ["prime", "minister"])


def test_split_paragraphs_on_blank_lines() -> None:
    text = "first line\nstill first\n\nsecond\n   \n\nthird  "
    assert split_paragraphs(text) == ["first line\nstill first", "second", "third"]


def test_split_paragraphs_on_single_newlines_when_no_blank_line() -> None:
    assert split_paragraphs("a\nb\n c ") == ["a", "b", "c"]


def test_split_paragraphs_empty() -> None:
    assert split_paragraphs("") == [] and split_paragraphs("\n\n  \n") == []


def test_split_sentences() -> None:
    text = 'He left. She came! Why? "Quoted" start. 1990 was dry. lower case. x\nnext line'
    assert split_sentences(text) == [
        "He left.", "She came!", "Why?", '"Quoted" start.', "1990 was dry. lower case. x",
        "next line",
    ]  # fmt: skip


def test_split_sentences_without_terminal_punctuation() -> None:
    assert split_sentences("no end here") == ["no end here"]
    assert split_sentences("") == []


def test_word_count_counts_whitespace_words() -> None:
    assert word_count("one two\tthree\n\nfour  five-six") == 5
    assert word_count("") == 0


def test_paragraph_spans_are_where_the_paragraphs_are() -> None:
    for text in ["  a b\n \n\nc\n\n  ", "one\ntwo\n\n", "x", "", "\n \n", "p\r\n\r\nq"]:
        spans = paragraph_spans(text)
        assert [text[start:end] for start, end in spans] == split_paragraphs(text), text
    assert paragraph_spans("  a b\n \n\nc") == [(2, 5), (9, 10)]
