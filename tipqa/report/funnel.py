"""The funnel of a build's outcomes: a pool's questions through the token stage, then the
vector stage; a split's by deciding stage and label (the report and the explorer show it)."""

from __future__ import annotations

from typing import Any

TOKEN_OUTCOMES = ("answerable_token", "discarded_token", "undetermined_token")
VECTOR_OUTCOMES = ("answerable_vector", "unanswerable_vector", "undetermined_vector")


def pool_funnel(summary: dict[str, Any]) -> dict[str, int]:
    """A pool's questions through the token stage, then through the vector stage."""
    stages = summary["by_stage"]
    funnel = {"questions": summary["questions"]}
    funnel.update({name: stages.get(name, 0) for name in TOKEN_OUTCOMES})
    funnel["to_vector"] = summary["questions"] - sum(funnel[n] for n in TOKEN_OUTCOMES)
    funnel.update({name: stages.get(name, 0) for name in VECTOR_OUTCOMES})
    return funnel


def split_funnel(summary: dict[str, Any]) -> dict[str, int]:
    """A split's questions by deciding stage and label."""
    stages = summary["by_stage"]
    names = ("answerable_token", "answerable_vector", "unanswerable_vector")
    return {"questions": summary["questions"], **{n: stages.get(n, 0) for n in names}}
