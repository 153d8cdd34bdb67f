"""Offline keyword extraction by rules: quoted titles, dates and numbers, capitalised names.

A stand-in for the paper's GPT-4o-mini extractor that needs nothing but the question. It
keeps entity-like spans: text in quotes, day-month-year dates, years and other numbers, and
runs of capitalised words (allowing "of", "the", "de"... between them). Capitalised question
words at the start of a sentence ("Which", "In", "The") are not names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tipqa.core.records import Keywords, Question
from tipqa.core.settings import Settings
from tipqa.core.text import tokenize

_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,})[\"“”«»]|(?<!\w)'([^']{2,})'(?!\w)")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})(?:,?\s+\d{{3,4}})?"
    rf"|(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{3,4}})?"
    rf"|(?:{_MONTHS})\s+\d{{4}})\b"
)
_NUMBER = re.compile(r"\b\d[\d,.]*\d\b|\b\d\b")
_WORD = re.compile(r"[^\W\d_][\w'’\-.]*\w|[^\W\d_]")
_CONNECTORS = {"of", "the", "de", "la", "le", "du", "del", "della", "von", "van", "der", "y"}
_NOT_NAMES = {
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "in", "on", "at",
    "for", "by", "from", "the", "a", "an", "this", "that", "these", "those", "it", "its", "he",
    "she", "they", "name", "according", "during", "after", "before", "since", "until", "if",
    "is", "was", "are", "were", "do", "does", "did", "i", "to", "with", "as", "of", "and",
    "or", "not", "can", "could", "would", "should", "whats", "what's", "there",
}  # fmt: skip


def extract_keywords(question: str) -> list[str]:
    """Entity-like spans of `question`, in order of appearance, without duplicates."""
    spans: list[tuple[int, str]] = []
    masked = question
    for pattern in (_QUOTED, _DATE, _NUMBER):
        for match in pattern.finditer(masked):
            text = next(g for g in match.groups() if g) if match.groups() else match.group(0)
            spans.append((match.start(), text.strip()))
            masked = masked[: match.start()] + " " * len(match.group(0)) + masked[match.end() :]
    spans.extend(_capitalised_runs(masked))
    spans.sort()
    out: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for _, text in spans:
        key = tuple(tokenize(text))
        if key and key not in seen:
            seen.add(key)
            out.append(text)
    return out


def _capitalised_runs(text: str) -> list[tuple[int, str]]:
    """Runs of capitalised words; sentence-initial function words are dropped."""
    runs: list[tuple[int, str]] = []
    current: list[re.Match[str]] = []
    pending: list[re.Match[str]] = []
    sentence_start = True
    previous_end = 0

    def close() -> None:
        if current:
            start, end = current[0].start(), current[-1].end()
            runs.append((start, text[start:end].strip(".")))
        current.clear()
        pending.clear()

    for match in _WORD.finditer(text):
        gap = text[previous_end : match.start()]
        if re.search(r"[.?!;:,()\[\]]|\s{2,}", gap):
            close()
        if re.search(r"[.?!]", gap) or previous_end == 0:
            sentence_start = True
        word = match.group(0)
        lower = word.lower()
        is_cap = word[0].isupper()
        if is_cap and not (sentence_start and lower in _NOT_NAMES) and lower not in {"i"}:
            if pending and current:
                current.extend(pending)
            pending.clear()
            current.append(match)
        elif current and lower in _CONNECTORS and not is_cap:
            pending.append(match)
        else:
            close()
        sentence_start = False
        previous_end = match.end()
    close()
    return runs


RULES_VERSION = "v1"


@dataclass(frozen=True)
class RuleKeywordSettings(Settings):
    """[keywords] of the rules backend: nothing to set; the rules' version is its identity."""

    def identity(self) -> dict[str, Any]:
        """The version of the rules (bumped whenever they change what they extract)."""
        return {"rules_version": RULES_VERSION}


class RuleKeywordExtractor:
    """The offline keyword extractor (registry name "rules")."""

    name = f"rules:{RULES_VERSION}"

    def __init__(self, settings: RuleKeywordSettings | None = None) -> None:
        self.settings = settings or RuleKeywordSettings()

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords of every question by the rules above."""
        return [
            Keywords(q.id, kws, raw=", ".join(kws))
            for q in questions
            for kws in [extract_keywords(q.text)]
        ]

    def close(self) -> None:
        """Nothing to let go of (the rules hold no connection)."""
