"""Whether a stream's samples share a token where they join: a check of the `overlap` setting.

Megatron cuts its samples every `seq_length - 1` tokens of the document concatenation, so
consecutive samples share one token (`overlap = 1`, Pythia's); a stream cut every
`seq_length` tokens shares none (`overlap = 0`). Matching relies on the setting to place a
document's short first and last pieces (`tipqa.training_order.locate`), so with the wrong one
those tokens are left unlocated. The pieces found say which it is: where one piece of a
document runs to its sequence's end before token e and another piece of the document heads a
sequence, that head begins at token e - 1 when samples share a token, at e when they do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tipqa.training_order.wanted import WantedDocument

MIN_JOINS = 3


@dataclass(frozen=True)
class Covering:
    """Document tokens [start, stop) were at `position` of sequence `sequence` (batch `batch`)."""

    start: int
    stop: int
    batch: int
    sequence: int
    position: int


@dataclass(frozen=True)
class Joins:
    """Sample joins seen from both sides, by the number of tokens the two samples share."""

    sharing_one: int = 0
    sharing_none: int = 0

    def suggested_overlap(self, overlap: int) -> int | None:
        """The other overlap when the joins contradict `overlap`, else None.

        A contradiction is at least `MIN_JOINS` joins that fit the other value and more than
        twice as many as fit `overlap` (with the right setting, joins that fit the other one
        are coincidences: a document's two occurrences cut one token apart).
        """
        agree, disagree = (
            (self.sharing_one, self.sharing_none)
            if overlap == 1
            else (self.sharing_none, self.sharing_one)
        )
        if disagree >= MIN_JOINS and disagree > 2 * agree:
            return 1 - overlap
        return None

    def warning(self, overlap: int, unlocated: int) -> str | None:
        """What to do when the joins contradict `overlap` (None when they do not)."""
        other = self.suggested_overlap(overlap)
        if other is None:
            return None
        fits = {1: self.sharing_one, 0: self.sharing_none}
        return (
            f"[training_order] overlap = {overlap}, but the training stream's samples look "
            f"cut with overlap = {other}: {fits[other]} joins between found pieces fit "
            f"overlap = {other}, {fits[overlap]} fit overlap = {overlap}. With the wrong "
            "overlap the first and last tokens of documents cut across samples stay unlocated "
            f"({unlocated} tokens of the wanted spans are); set overlap = {other} and rebuild "
            "the boundary."
        )

    def counts(self) -> dict[str, int]:
        """The joins as stats counters."""
        return {"joins_sharing_one": self.sharing_one, "joins_sharing_none": self.sharing_none}


def count_joins(
    documents: Sequence[WantedDocument],
    coverings: Mapping[int, Sequence[Covering]],
    seq_length: int,
) -> Joins:
    """The joins between samples that the found pieces of each document show."""
    one = none = 0
    for doc, found in coverings.items():
        heads = {p.start for p in found if p.position == 0}
        for piece in found:
            at_end = piece.position + piece.stop - piece.start == seq_length
            if not at_end or piece.stop >= documents[doc].length:
                continue
            one += piece.stop - 1 in heads
            none += piece.stop in heads
    return Joins(one, none)
