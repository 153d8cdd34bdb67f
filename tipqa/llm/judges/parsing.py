"""The one strict reading of a yes/no answer: only "yes" or "no" count (the relevance judge's,
and UA-Bench's answer judge's, whose protocol requires exactly Yes or No)."""

from __future__ import annotations

from tipqa.core.records import Relevance


def parse_yes_no(raw: str) -> Relevance | None:
    """Return "yes" or "no" when `raw` is exactly that (case and surrounding whitespace ignored),
    else None."""
    answer = raw.strip().lower()
    if answer in ("yes", "no"):
        return answer  # type: ignore[return-value]
    return None
