"""Scores broken down by the stage that decided each label, and by keyword-matching documents.

The match bins are those of the build report (powers of ten, like figure 3 of the paper), on
each question's `total_matches` (the token search's count of documents containing all of its
keywords and an answer alias); questions without a count fall in `unknown`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tipqa.dataset.match_bins import MATCH_BINS, UNKNOWN_BIN, match_bin
from tipqa.evaluate.metrics import Scored, summary

STAGES = ("token", "vector")
ROW_KEYS = (
    "questions",
    "answerable",
    "unanswerable",
    "em_f1",
    "pm_f1",
    "accuracy_answerable",
    "refusal_rate_answerable",
    "refusal_rate_unanswerable",
)


def group_row(group: str, scored: Sequence[Scored]) -> dict[str, Any]:
    """One breakdown row: the group's size and its main metrics (counts too)."""
    full = summary(scored)
    return {"group": group, **{key: full[key] for key in ROW_KEYS}, "counts": full["counts"]}


def _rows(
    scored: Sequence[Scored], order: Sequence[str], key: Callable[[Scored], str]
) -> list[dict[str, Any]]:
    groups: dict[str, list[Scored]] = {name: [] for name in order}
    for item in scored:
        groups.setdefault(key(item), []).append(item)
    return [group_row(name, items) for name, items in groups.items() if items]


def by_stage(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """Rows per deciding stage (token or vector), non-empty ones only."""
    return _rows(scored, STAGES, lambda item: item.stage)


def by_matches(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """Rows per bin of keyword-matching documents, in bin order, non-empty ones only."""
    order = [b.label for b in MATCH_BINS] + [UNKNOWN_BIN]
    return _rows(scored, order, lambda item: match_bin(item.total_matches))
