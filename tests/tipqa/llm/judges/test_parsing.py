"""The one strict reading of a yes/no answer (the relevance judge's and UA-Bench's judge's)."""

from __future__ import annotations

import pytest

from tipqa.llm.judges.parsing import parse_yes_no


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("yes", "yes"), ("no", "no"), (" Yes\n", "yes"), ("NO", "no"), ("\tno ", "no")],
)
def test_exact_yes_or_no(raw: str, expected: str) -> None:
    assert parse_yes_no(raw) == expected


@pytest.mark.parametrize(
    "raw", ["", "yes.", "Yes, it does", "no!", "maybe", "y", "nope", "yes no", "'yes'"]
)
def test_anything_else_is_none(raw: str) -> None:
    assert parse_yes_no(raw) is None
