"""The records of the training-time boundary: each relevant evidence with its first step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from tipqa.core.records import Evidence, Record, Stage


@dataclass
class SeenEvidence(Record):
    """One relevant evidence of a question and the first training step that consumed it.

    `step` is None when no training sequence held it; `matched`, `unlocated` and `exact`
    are the training order's (`tipqa.training_order.base.SpanStep`): `exact` is False when
    a few of its first or last tokens could not be placed for certain, so that `step` is an
    upper bound, or the step of the other tokens where those are among the `unlocated`.
    """

    stage: Stage
    doc_id: str
    unit_id: str
    text: str
    step: int | None
    matched: str
    unlocated: int = 0
    exact: bool = True

    def evidence(self) -> Evidence:
        """The evidence itself, without its step."""
        return Evidence(self.stage, self.doc_id, self.unit_id, self.text)


@dataclass
class FirstSeen(Record):
    """When an answerable question's evidence was first consumed, and which evidence it was.

    `first_seen_step` is the smallest step of its relevant evidence (None when none was
    found in the training stream); `evidence` is the evidence with that step (the first in
    rank order on a tie); `relevant` is all of it. `exact` is False when the step of some
    relevant evidence is not exact, so that `first_seen_step` may not be either.
    """

    question_id: str
    first_seen_step: int | None
    evidence: Evidence | None
    relevant: list[SeenEvidence] = field(default_factory=list)
    exact: bool = True
    nested: ClassVar[dict[str, type[Record]]] = {"evidence": Evidence, "relevant": SeenEvidence}
