"""The relevance-judge seam."""

from __future__ import annotations

from typing import Protocol

from tipqa.records import JudgeRequest, Judgment
from tipqa.registry import Registry


class RelevanceJudge(Protocol):
    """Judges batches of requests; a failed judgment has `label=None`, never "no"."""

    name: str

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request, in order."""
        ...


JUDGE_SLOTS = ("document", "question", "answer")
"""The slots every judge prompt template must have."""

JUDGES: Registry[RelevanceJudge] = Registry("relevance judge")
JUDGES.add("rules", "tipqa.judges.rules:RuleJudge")
JUDGES.add("openai", "tipqa.judges.openai:from_section")  # wiring: lead
JUDGES.add("vllm", "tipqa.judges.vllm:VLLMJudge")
