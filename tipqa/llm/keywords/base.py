"""The keyword-extractor seam."""

from __future__ import annotations

from typing import Protocol

from tipqa.core.records import Keywords, Question
from tipqa.core.registry import Registry, has_attribute, takes


class KeywordExtractor(Protocol):
    """Turns questions into the entity keywords that token search requires."""

    name: str

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order; a failure is recorded in `Keywords.error`."""
        ...


KEYWORD_CAPABILITIES = {
    "cacheable": takes("cache"),
    "counted": has_attribute("stats"),
}
"""The optional capabilities of a keyword extractor: it asks an LLM through the LLM cache given
as `cache` (`tipqa.llm.cached_chat`), it counts its work (`Counted`)."""
LLM_EXTRACTOR = ("cacheable", "counted")

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
