"""Judge windows (appendix A.2 of the paper).

A token-search hit can be far longer than the judge's context. We slide over the document's
paragraphs to the *minimal* windows: runs of consecutive paragraphs that contain every keyword
and at least one answer alias, and that contain no shorter such run. Windows are taken left to
right without overlap. A window over the word limit is cut left to right into pieces of at most
`max_words` words. When no window contains everything (a phrase broken across a paragraph
boundary, say), the whole document is cut into pieces instead, so nothing is left unjudged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from tipqa.core.errors import ConfigError
from tipqa.core.records import Document, Window
from tipqa.core.settings import Settings, setting
from tipqa.core.text import contains_phrase, paragraph_spans, split_paragraphs, tokenize
from tipqa.llm.judges.base import KnowsContext

DEFAULT_MAX_WORDS = 30_000


@dataclass(frozen=True)
class WindowSettings:
    """How windows are cut: the word limit and the most windows judged per document."""

    max_words: int = DEFAULT_MAX_WORDS
    max_windows: int = 16


@dataclass(frozen=True)
class WindowStepSettings(Settings):
    """[judge] keys of the judging steps, whatever the judge: the windows.

    `max_words` None: what the judge's context holds (a judge whose settings know its context
    length, such as vLLM's), else the paper's 30,000 words.
    """

    RETIRED_KEYS: ClassVar[Mapping[str, str]] = {
        "cache": "the LLM cache is switched for the whole run by [build] llm_cache "
        "(true or false; every LLM answer: judge, keywords, answers); move the key there",
    }

    max_words: int | None = setting(
        None,
        doc="window word limit (empty: what the vllm judge's context holds; for other judges "
        "30,000 words, the paper's, more than a small local server's context: set it there)",
    )
    max_windows: int = setting(16, doc="windows judged per document")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_words is not None and self.max_words < 1:
            raise ConfigError(f"[judge] max_words must be at least 1, got {self.max_words}")
        if self.max_windows < 1:
            raise ConfigError(f"[judge] max_windows must be at least 1, got {self.max_windows}")

    def resolve(self, context_words: int | None) -> WindowSettings:
        """The window limits, `max_words` taken from the judge's context when unset."""
        words = self.max_words or context_words or DEFAULT_MAX_WORDS
        return WindowSettings(max_words=words, max_windows=self.max_windows)

    def resolve_for(self, judge: Settings) -> WindowSettings:
        """The window limits for a judge of these settings: `max_words` if set, else what its
        context holds when its settings know it (the vLLM judge's, without loading the model),
        else the paper's 30,000 words."""
        if self.max_words is None and isinstance(judge, KnowsContext):
            return self.resolve(judge.window_words())
        return self.resolve(None)


def _targets(paragraph: str, keywords: list[list[str]], aliases: list[list[str]]) -> set[int]:
    """Indexes of the targets a paragraph contains: keywords 0..n-1, and n for any alias."""
    tokens = tokenize(paragraph)
    found = {i for i, kw in enumerate(keywords) if contains_phrase(tokens, kw)}
    if any(contains_phrase(tokens, alias) for alias in aliases):
        found.add(len(keywords))
    return found


def minimal_spans(present: list[set[int]], needed: int) -> list[tuple[int, int]]:
    """Non-overlapping minimal runs [first, last] of `present` covering targets 0..needed-1."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(present):
        counts: dict[int, int] = {}
        end = None
        for j in range(start, len(present)):
            for t in present[j]:
                counts[t] = counts.get(t, 0) + 1
            if len(counts) == needed:
                end = j
                break
        if end is None:
            break
        first = start
        while all(counts[t] > 1 for t in present[first]):
            for t in present[first]:
                counts[t] -= 1
            first += 1
        spans.append((first, end))
        start = end + 1
    return spans


def split_words(text: str, max_words: int) -> list[str]:
    """Cut `text` left to right into pieces of at most `max_words` whitespace words."""
    words = text.split()
    if len(words) <= max_words:
        return [text]
    return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]


_WORD = re.compile(r"\S+")


def piece_spans(text: str, start: int, end: int, max_words: int) -> list[tuple[int, int]]:
    """The offsets in `text` of the pieces `split_words` cuts `text[start:end]` into."""
    words = [m.span() for m in _WORD.finditer(text, start, end)]
    if len(words) <= max_words:
        return [(start, end)]
    return [
        (words[i][0], words[min(i + max_words, len(words)) - 1][1])
        for i in range(0, len(words), max_words)
    ]


def judge_windows(
    document: Document,
    keywords: list[str],
    aliases: list[str],
    settings: WindowSettings = WindowSettings(),
) -> tuple[list[Window], bool]:
    """The windows of `document` to judge, and whether `max_windows` cut some off."""
    paragraphs = split_paragraphs(document.text)
    kw_tokens = [t for t in (tokenize(k) for k in keywords) if t]
    alias_tokens = [t for t in (tokenize(a) for a in aliases) if t]
    present = [_targets(p, kw_tokens, alias_tokens) for p in paragraphs]
    needed = len(kw_tokens) + (1 if alias_tokens else 0)
    spans = minimal_spans(present, needed) if needed else []
    if not spans:
        spans = [(0, len(paragraphs) - 1)] if paragraphs else []
    offsets = paragraph_spans(document.text)
    windows: list[Window] = []
    for first, last in spans:
        text = "\n\n".join(paragraphs[first : last + 1])
        pieces = split_words(text, settings.max_words)
        where = piece_spans(document.text, offsets[first][0], offsets[last][1], settings.max_words)
        for piece, (start, end) in zip(pieces, where, strict=True):
            windows.append(Window(document.id, len(windows), first, last, piece, start, end))
    truncated = len(windows) > settings.max_windows
    return windows[: settings.max_windows], truncated
