"""Bins of the number of documents matching a question's keywords (the paper's figure 3)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MatchBin:
    """A range of keyword-matching document counts, both ends included (None: no upper end)."""

    label: str
    low: int
    high: int | None

    def holds(self, count: int) -> bool:
        """True when `count` falls in the bin."""
        return count >= self.low and (self.high is None or count <= self.high)


MATCH_BINS: tuple[MatchBin, ...] = (
    MatchBin("0", 0, 0),
    MatchBin("1", 1, 1),
    MatchBin("2-10", 2, 10),
    MatchBin("11-100", 11, 100),
    MatchBin("101-1,000", 101, 1_000),
    MatchBin("1,001-10,000", 1_001, 10_000),
    MatchBin(">10,000", 10_001, None),
)
UNKNOWN_BIN = "unknown"


def match_bin(count: int | None) -> str:
    """The bin label of a match count (`unknown` when token search gave none)."""
    if count is None:
        return UNKNOWN_BIN
    return next(b.label for b in MATCH_BINS if b.holds(count))
