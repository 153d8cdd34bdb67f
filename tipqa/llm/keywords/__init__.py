"""Keyword extraction: the entities of a question that a relevant document must mention."""

from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS, KeywordExtractor

__all__ = ["KEYWORD_EXTRACTORS", "KeywordExtractor"]
