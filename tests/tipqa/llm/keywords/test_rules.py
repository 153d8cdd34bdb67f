"""The offline keyword extractor: entity-like spans of a question."""

from __future__ import annotations

import pytest

from tipqa.core.records import Keywords, Question
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS
from tipqa.llm.keywords.rules import RuleKeywordExtractor, extract_keywords


def test_paper_table6_chipmunks() -> None:
    assert extract_keywords("Who was the man behind The Chipmunks?") == ["The Chipmunks"]


def test_paper_table6_lloyd_webber() -> None:
    found = extract_keywords(
        "Which Lloyd Webber musical premiered in the US on 10th December 1993?"
    )
    assert found[0] == "Lloyd Webber"
    assert "10th December 1993" in found
    assert set(found) <= {"Lloyd Webber", "US", "10th December 1993"}


def test_paper_table6_balfour() -> None:
    found = extract_keywords("Who was the next British Prime Minister after Arthur Balfour?")
    assert "Arthur Balfour" in found
    assert "Who" not in found and "After" not in found


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ('Who wrote the novel "The Glass Orchard"?', ["The Glass Orchard"]),
        ("Who sang 'Blue Moon' in 1961?", ["Blue Moon", "1961"]),
        ("Who sang “Blue Moon”?", ["Blue Moon"]),
    ],
)
def test_quoted_titles_are_kept_whole(question: str, expected: list[str]) -> None:
    assert extract_keywords(question) == expected


def test_apostrophes_are_not_quotes() -> None:
    assert extract_keywords("What was Gulliver's ship called in Swift's tale?") == [
        "Gulliver's",
        "Swift's",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which element has atomic number 79?", ["79"]),
        ("On July 4, 1776 what was signed?", ["July 4, 1776"]),
        ("Who was born on 3rd May in Paris?", ["3rd May", "Paris"]),
        ("In 1887, which inventor filed a patent?", ["1887"]),
    ],
)
def test_years_dates_and_numbers(question: str, expected: list[str]) -> None:
    assert extract_keywords(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the capital of France?", ["France"]),
        ("When did the Battle of Hastings take place?", ["Battle of Hastings"]),
        ("In The Simpsons, who is Bart?", ["The Simpsons", "Bart"]),
        ("Who painted the Mona Lisa? The Louvre holds it.", ["Mona Lisa", "Louvre"]),
        ("How many people live in the Republic of Ireland?", ["Republic of Ireland"]),
        ("Is it true that I am here?", []),
    ],
)
def test_sentence_initial_question_words_are_dropped(question: str, expected: list[str]) -> None:
    assert extract_keywords(question) == expected


def test_duplicates_by_tokens_are_dropped_in_order() -> None:
    assert extract_keywords('Did "Peter Pan" meet Peter Pan in Paris?') == ["Peter Pan", "Paris"]


def test_extractor_keeps_order_and_ids() -> None:
    questions = [
        Question("a", "Who was the man behind The Chipmunks?", "Ross Bagdasarian", []),
        Question("b", "what is it?", "x", []),
    ]
    extractor = KEYWORD_EXTRACTORS.create("rules")
    assert isinstance(extractor, RuleKeywordExtractor)
    assert extractor.extract(questions) == [
        Keywords("a", ["The Chipmunks"], raw="The Chipmunks"),
        Keywords("b", [], raw=""),
    ]
