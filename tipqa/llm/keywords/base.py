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

KEYWORD_EXTRACTORS: Registry[KeywordExtractor] = Registry("keyword extractor", KEYWORD_CAPABILITIES)
KEYWORD_EXTRACTORS.add(
    "rules",
    "tipqa.llm.keywords.rules:RuleKeywordExtractor",
    settings="tipqa.llm.keywords.rules:RuleKeywordSettings",
)
KEYWORD_EXTRACTORS.add(
    "openai",
    "tipqa.llm.keywords.openai:OpenAIKeywordExtractor",
    settings="tipqa.llm.keywords.openai:OpenAIKeywordSettings",
    capabilities=LLM_EXTRACTOR,
)
KEYWORD_EXTRACTORS.add(
    "vllm",
    "tipqa.llm.keywords.vllm:VLLMKeywordExtractor",
    settings="tipqa.llm.keywords.vllm:VLLMKeywordSettings",
    capabilities=LLM_EXTRACTOR,
)
