"""The keyword-extractor seam."""

from __future__ import annotations

from typing import Protocol

from tipqa.core.records import Keywords, Question
from tipqa.core.registry import Registry, has_attribute


class KeywordExtractor(Protocol):
    """Turns questions into the entity keywords that token search requires."""

    name: str

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order; a failure is recorded in `Keywords.error`."""
        ...

    def close(self) -> None:
        """Let go of what the extractor holds (connections, the LLM cache's); it extracts no
        more."""
        ...


KEYWORD_CAPABILITIES = {"counted": has_attribute("stats")}
"""The optional capability of a keyword extractor: it counts its work (`Counted`)."""
LLM_EXTRACTOR = ("counted",)

KEYWORD_EXTRACTORS: Registry[KeywordExtractor] = Registry(
    "keyword extractor", KEYWORD_CAPABILITIES, registered_by=("tipqa.llm.providers",)
)
"""The keyword extractors: the offline rules here, the LLM providers by `tipqa.llm.providers`."""
KEYWORD_EXTRACTORS.add(
    "rules",
    "tipqa.llm.keywords.rules:RuleKeywordExtractor",
    settings="tipqa.llm.keywords.rules:RuleKeywordSettings",
)
