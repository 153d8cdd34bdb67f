"""The funnel of a build's outcomes: a pool's questions through the token stage, then the
vector stage; a split's by deciding stage and label (the report and the explorer show it)."""

from __future__ import annotations

from typing import Any

TOKEN_OUTCOMES = ("answerable_token", "discarded_token", "undetermined_token")
VECTOR_OUTCOMES = ("answerable_vector", "unanswerable_vector", "undetermined_vector")
AUDIT_OUTCOME = "answerable_audit"
"""Questions the audit moved to answerable (`[audit] apply`), from discarded or unanswerable."""


def pool_funnel(summary: dict[str, Any]) -> dict[str, int]:
    """A pool's questions through the token stage, then through the vector stage, and those
    the audit moved to answerable (from either stage's label)."""
    stages = summary["by_stage"]
    from_discarded = summary.get("audit_moved", {}).get("discarded", 0)
    funnel = {"questions": summary["questions"]}
    funnel.update({name: stages.get(name, 0) for name in TOKEN_OUTCOMES})
    decided = sum(funnel[n] for n in TOKEN_OUTCOMES) + from_discarded
    funnel["to_vector"] = summary["questions"] - decided
    funnel.update({name: stages.get(name, 0) for name in VECTOR_OUTCOMES})
    funnel[AUDIT_OUTCOME] = stages.get(AUDIT_OUTCOME, 0)
    return funnel


def split_funnel(summary: dict[str, Any]) -> dict[str, int]:
    """A split's questions by deciding stage and label."""
    stages = summary["by_stage"]
    names = ("answerable_token", "answerable_vector", AUDIT_OUTCOME, "unanswerable_vector")
    return {"questions": summary["questions"], **{n: stages.get(n, 0) for n in names}}
