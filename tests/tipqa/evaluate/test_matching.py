"""Answer normalisation, exact match against aliases, and SQuAD 2.0 token F1."""

from __future__ import annotations

import pytest

from tipqa.evaluate.matching import best_f1, exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Beatles", "beatles"),
        ("  An   Apple a day ", "apple day"),
        ("Rock_and_Roll!", "rock and roll"),
        ("St. Paul’s Cathedral", "st paul s cathedral"),
        ("Theatre", "theatre"),
        ("", ""),
    ],
)
def test_normalize_answer(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


def test_alias_matches_only_after_normalisation() -> None:
    golds = ["Paris", "City of Paris"]
    assert "The City of Paris!" not in golds
    assert exact_match("The City of Paris!", golds)
    assert not exact_match("Parisian", golds)
    assert not exact_match("Paris, France", golds)


def test_token_f1_by_hand() -> None:
    # prediction "george washington carver" vs gold "george washington": 2 common tokens,
    # precision 2/3, recall 1, F1 = 2 * (2/3) / (5/3) = 0.8
    assert token_f1("George Washington Carver", "George Washington") == pytest.approx(0.8)
    assert token_f1("the", "a") == 1.0  # both empty after normalisation
    assert token_f1("", "Paris") == 0.0
    assert token_f1("Rome", "Paris") == 0.0


def test_best_f1_takes_the_best_alias() -> None:
    assert best_f1("Washington", ["George Washington", "Washington"]) == 1.0
    assert best_f1("Washington", ["George Washington"]) == pytest.approx(2 / 3)
    assert best_f1("Washington", []) == 0.0
