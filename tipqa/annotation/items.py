"""The records of human annotation: sampled items (the private key) and completed labels."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from tipqa.core.records import Label, Record, Relevance, Triplet

ITEM_ID_PREFIX = "it-"


def item_id(question_id: str, stage: str, unit_id: str) -> str:
    """A stable item id: the same judged unit of the same question always gets the same id."""
    digest = hashlib.sha1(f"{question_id}\x1f{stage}\x1f{unit_id}".encode()).hexdigest()
    return ITEM_ID_PREFIX + digest[:12]


def annotator_names(count: int) -> list[str]:
    """The annotators' names: annotator-01, annotator-02, ... (also their file names)."""
    width = max(2, len(str(count)))
    return [f"annotator-{i:0{width}d}" for i in range(1, count + 1)]


@dataclass
class AnnotationItem(Triplet):
    """One sampled triplet with everything the statistics need, the judge's label included.

    The annotators' exports carry only the question, answer, keywords and `text`; the rest of
    this record (judge label, final label, stage, evidence flag) stays in the private key file.
    """

    item_id: str
    judge_label: Relevance
    judge: str
    final_label: Label
    evidence: bool
    text: str = ""
    annotators: list[str] = field(default_factory=list)

    @property
    def stratum(self) -> str:
        """The sampling stratum: final label and stage, e.g. "answerable/token"."""
        return f"{self.final_label}/{self.stage}"


@dataclass
class Annotation(Record):
    """One person's label of one item, with where it was read from."""

    item_id: str
    annotator: str
    relevant: Relevance
    problematic: bool = False
    comment: str = ""
    source: str = ""
