"""The keyword-extractor seam."""

from __future__ import annotations

from typing import Protocol

from tipqa.records import Keywords, Question
from tipqa.registry import Registry


class KeywordExtractor(Protocol):
    """Turns questions into the entity keywords that token search requires."""

    name: str

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order; a failure is recorded in `Keywords.error`."""
        ...


KEYWORD_EXTRACTORS: Registry[KeywordExtractor] = Registry("keyword extractor")
KEYWORD_EXTRACTORS.add("rules", "tipqa.keywords.rules:RuleKeywordExtractor")
KEYWORD_EXTRACTORS.add("openai", "tipqa.keywords.openai:from_section")  # wiring: lead
