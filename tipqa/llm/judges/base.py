"""The relevance-judge seam."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tipqa.core.records import JudgeRequest, Judgment
from tipqa.core.registry import Registry, has_attribute, settings_have


class RelevanceJudge(Protocol):
    """Judges batches of requests; a failed judgment has `label=None`, never "no"."""

    name: str

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request, in order."""
        ...

    def close(self) -> None:
        """Let go of what the judge holds (connections, the LLM cache's); it judges no more."""
        ...


@runtime_checkable
class KnowsContext(Protocol):
    """Judge settings that know how many words of a document fit the judge's context."""

    def window_words(self) -> int:
        """The judge-window word limit that fits the context (no model is loaded)."""
        ...


@runtime_checkable
class Prompted(Protocol):
    """Judge settings that send a prompt template (a name or a file)."""

    prompt: str


JUDGE_SLOTS = ("document", "question", "answer")
"""The slots every judge prompt template must have."""

JUDGE_CAPABILITIES = {
    "counted": has_attribute("stats"),
    "knows_context": settings_have("window_words"),
    "prompted": settings_have("prompt"),
}
"""The optional capabilities of a judge: it counts its work (`Counted`), its settings know the
window that fits (`KnowsContext`), it sends a prompt template (`Prompted`)."""
LLM_JUDGE = ("counted", "prompted")

JUDGES: Registry[RelevanceJudge] = Registry(
    "relevance judge", JUDGE_CAPABILITIES, registered_by=("tipqa.llm.providers",)
)
"""The judges: the offline rules here, the LLM providers by `tipqa.llm.providers`."""
JUDGES.add(
    "rules", "tipqa.llm.judges.rules:RuleJudge", settings="tipqa.llm.judges.rules:RuleJudgeSettings"
)
