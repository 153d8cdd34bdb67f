"""Where a question's aliases and keywords occur in a text, and the excerpts around them.

Matches follow the package's one definition of tokens (`tipqa.core.text`): a phrase matches a
run of consecutive tokens equal to its own, whatever the case and the punctuation between
them, as the token search and the judge windows see it. Where an alias and a keyword overlap
the alias wins. An excerpt keeps `around` characters on each side of the first matches
(aliases first), cut at whitespace, and the start of a text without any match.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from tipqa.core.text import MAX_TOKEN_CHARS, TOKEN_RE, tokenize

ALIAS, KEYWORD = 0, 1
"""The kinds of a match, as the page's marks call them."""

PIECES = 3
"""Excerpts kept of a text at most (one around each of its first matches)."""

SNAP = 24
"""Characters an excerpt's edge may move to fall on whitespace."""


@dataclass(frozen=True)
class Match:
    """An occurrence of an alias or a keyword: `text[start:end]`."""

    start: int
    end: int
    kind: int


def _phrases(phrases: Iterable[str], kind: int) -> dict[str, list[tuple[list[str], int]]]:
    """Each phrase's tokens, by their first token."""
    found: dict[str, list[tuple[list[str], int]]] = defaultdict(list)
    for phrase in phrases:
        tokens = tokenize(phrase)
        if tokens and (tokens, kind) not in found[tokens[0]]:
            found[tokens[0]].append((tokens, kind))
    return found


def find_matches(text: str, aliases: Iterable[str], keywords: Iterable[str]) -> list[Match]:
    """Every alias and keyword occurrence in `text`, in order, none overlapping."""
    wanted = _phrases(aliases, ALIAS)
    for first, phrases in _phrases(keywords, KEYWORD).items():
        wanted[first].extend(phrases)
    if not wanted:
        return []
    spans = [m.span() for m in TOKEN_RE.finditer(text) if m.end() - m.start() <= MAX_TOKEN_CHARS]
    tokens = [text[start:end].lower() for start, end in spans]
    found: list[Match] = []
    for i, token in enumerate(tokens):
        for phrase, kind in wanted.get(token, ()):
            if tokens[i : i + len(phrase)] == phrase:
                found.append(Match(spans[i][0], spans[i + len(phrase) - 1][1], kind))
    found.sort(key=lambda m: (m.kind, m.start, -m.end))
    kept: list[Match] = []
    for match in found:
        if all(match.end <= k.start or match.start >= k.end for k in kept):
            kept.append(match)
    return sorted(kept, key=lambda m: m.start)


def _snap_start(text: str, start: int) -> int:
    if start <= 0:
        return 0
    if text[start - 1] == " ":
        return start
    space = text.find(" ", start, start + SNAP)
    return start if space == -1 else space + 1


def _snap_end(text: str, end: int) -> int:
    if end >= len(text):
        return len(text)
    if text[end] == " ":
        return end
    space = text.rfind(" ", max(0, end - SNAP), end)
    return end if space == -1 else space


def excerpt_spans(text: str, matches: list[Match], around: int) -> list[tuple[int, int]]:
    """The parts of `text` an excerpt keeps: `around` characters each side of the first
    `PIECES` matches (aliases before keywords), merged; the start of a text without matches."""
    if not matches:
        return [(0, _snap_end(text, min(len(text), 2 * around)))]
    chosen = sorted(sorted(matches, key=lambda m: m.kind)[:PIECES], key=lambda m: m.start)
    spans: list[tuple[int, int]] = []
    for match in chosen:
        start = min(match.start, _snap_start(text, match.start - around))
        end = max(match.end, _snap_end(text, match.end + around))
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans
