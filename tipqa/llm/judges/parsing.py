"""Strict reading of a judge's answer: only "yes" or "no" count."""

from __future__ import annotations

from tipqa.core.records import Relevance


def parse_relevance(raw: str) -> Relevance | None:
    """Return "yes" or "no" when `raw` is exactly that (case and whitespace ignored), else None."""
    answer = raw.strip().lower()
    if answer in ("yes", "no"):
        return answer  # type: ignore[return-value]
    return None
