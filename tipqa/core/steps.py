"""The steps of a build: one name each, in the order a build runs them.

Every step name that stats files, fingerprints and tests use is a member of `Step`; its value
is the name they record. The members' order is the build order (the rerun table's rows follow
it), and `SHARD_STEPS` are the steps of Algorithm 1 that run per block of questions.
"""

from __future__ import annotations

from enum import StrEnum


class Step(StrEnum):
    """A step of a build; `per_shard` when it runs once per block of a pool's questions."""

    per_shard: bool

    def __new__(cls, name: str, per_shard: bool = False) -> Step:
        member = str.__new__(cls, name)
        member._value_ = name
        member.per_shard = per_shard
        return member

    WORLD = "world"
    QUESTIONS = "questions"
    TOKEN_INDEX = "token_index"
    VECTOR_INDEX = "vector_index"
    KEYWORDS = "keywords", True
    TOKEN_SEARCH = "token_search", True
    TOKEN_JUDGE = "token_judge", True
    COST_PREVIEW = "cost_preview"
    VECTOR_SEARCH = "vector_search", True
    VECTOR_JUDGE = "vector_judge", True
    PARTITION = "partition"
    VERBATIM = "verbatim"
    AUDIT = "audit"
    TRAINING_INDEX = "training_index"
    BOUNDARY = "boundary"
    SPLITS = "splits"
    HUB_FOLDER = "hub_folder"
    REPORT = "report"
    ANNOTATION_EXPORT = "annotation_export"
    ANNOTATION_PUSH = "annotation_push"
    ANNOTATION_PULL = "annotation_pull"
    ANNOTATION_AGREEMENT = "annotation_agreement"
    PREDICTIONS = "predictions"
    EVALUATE = "evaluate"


SHARD_STEPS = tuple(step for step in Step if step.per_shard)
"""The steps of Algorithm 1 that run per block of questions, in order."""
