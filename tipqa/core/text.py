r"""The one definition of tokens, phrases, paragraphs and sentences used across backends.

Tokens are the maximal runs of characters matched by `[^\W_]` (Unicode letters and digits) in
the text lower-cased by Python; tokens longer than 40 characters are dropped (their neighbours
become adjacent). Phrase matching and frequency counting anywhere in the package use these
tokens. Neither tantivy's default analyzer nor Elasticsearch's standard one agrees with this
exactly, so `tipqa.indexes.token_index.tantivy_analysis` and the analyzer of
`tipqa.indexes.es.mappings` adapt
to it, and the embedded and the Elasticsearch backends agree on what "contains" means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

MAX_TOKEN_CHARS = 40
TOKEN_RE = re.compile(r"[^\W_]+")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens of `text`, as the token index sees them."""
    tokens = TOKEN_RE.findall(text.lower())
    if tokens and max(map(len, tokens)) > MAX_TOKEN_CHARS:
        return [t for t in tokens if len(t) <= MAX_TOKEN_CHARS]
    return tokens


def count_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Number of (possibly overlapping) occurrences of the token sequence `phrase`."""
    n = len(phrase)
    if n == 0 or n > len(tokens):
        return 0
    tokens = tokens if isinstance(tokens, list) else list(tokens)
    if n == 1:
        return tokens.count(phrase[0])
    first, rest = phrase[0], list(phrase[1:])
    count, i, stop = 0, 0, len(tokens) - n + 1
    while True:
        try:
            i = tokens.index(first, i, stop)
        except ValueError:
            return count
        count += tokens[i + 1 : i + n] == rest
        i += 1


def contains_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> bool:
    """True when `phrase` occurs in `tokens` as a contiguous run."""
    return count_phrase(tokens, phrase) > 0


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs separated by blank lines; single newlines when there is no blank line."""
    parts = _PARAGRAPH_BREAK.split(text)
    if len(parts) == 1:
        parts = text.split("\n")
    return [p for p in (part.strip() for part in parts) if p]


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """The character offsets [start, end) in `text` of the paragraphs `split_paragraphs` gives."""
    breaks = [(m.start(), m.end()) for m in _PARAGRAPH_BREAK.finditer(text)]
    if not breaks:
        breaks = [(i, i + 1) for i, c in enumerate(text) if c == "\n"]
    bounds = [0, *(b for pair in breaks for b in pair), len(text)]
    spans = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        part = text[start:end]
        stripped = part.strip()
        if stripped:
            first = start + len(part) - len(part.lstrip())
            spans.append((first, first + len(stripped)))
    return spans


def split_sentences(text: str) -> list[str]:
    """Rough sentences: a split after . ! ? followed by a capital or digit, and at newlines."""
    return [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if s]


def word_count(text: str) -> int:
    """Words separated by whitespace (the paper's measure for the 30,000-word limit)."""
    return len(text.split())


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], cell: Callable[[Any], str] = str
) -> str:
    """A Markdown table: the header, its rule, and each row's values written by `cell`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)
