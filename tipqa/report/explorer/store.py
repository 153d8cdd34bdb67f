"""The page's texts, each stored once, and the references a question's page holds to them.

A window, chunk or evidence text is referenced as a list `[length, matches, pieces, whole,
fold, context]` without its trailing nulls: where the page keeps only excerpts, `pieces` are
`[[offset, text id, marks], ...]`; where it keeps the whole text, `whole` is `[text id, marks]`
and `fold` the excerpts shown first, `[[start, end], ...]` (null: the text is short enough to
show whole); `context` is `[before id, after id]`, the document's text just before and after
it where the build's index gave it. Marks are flat `[start, end, kind, ...]` within their
string (kind 0 an alias, 1 a keyword).
Offsets and lengths count UTF-16 code units, as the page's strings do. Texts go to files
`texts-NNNNN.js` of about `TEXT_FILE_BYTES` each, numbered in the order they are first used,
so that a question's texts sit in few files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from tipqa.report.explorer.matches import Match, excerpt_spans, find_matches

TEXT_FILE_BYTES = 256_000


def utf16(text: str) -> int:
    """The length of `text` in UTF-16 code units (a JavaScript string's length)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class TextForm:
    """How the page keeps texts that are not evidence (whole, or as excerpts of `around`) and
    whether it keeps the document's text around them (`context`)."""

    whole: bool = True
    around: int = 120
    context: bool = True


WHOLE = TextForm(whole=True)
"""Texts whole, with their context (the report's copy of the page)."""
EXCERPTS = TextForm(whole=False, context=False)
"""Texts that are not evidence as excerpts around their matches, no context (the Hub's copy)."""


class TextStore:
    """Every distinct string of the page, numbered as first used, written file by file."""

    def __init__(self, write: Callable[[str, bytes], None]) -> None:
        self._write = write
        self._ids: dict[str, int] = {}
        self._pending: list[str] = []
        self._pending_bytes = 0
        self.starts: list[int] = []
        self.shared = 0

    def add(self, text: str) -> int:
        """The id of `text`, stored if new."""
        known = self._ids.get(text)
        if known is not None:
            self.shared += 1
            return known
        number = self._ids[text] = len(self._ids)
        if not self._pending:
            self.starts.append(number)
        self._pending.append(text)
        self._pending_bytes += len(text)
        if self._pending_bytes >= TEXT_FILE_BYTES:
            self.flush()
        return number

    def flush(self) -> None:
        """Write the pending strings as one file."""
        if self._pending:
            index = len(self.starts) - 1
            body = b"tipqa.texts(%d," % index + orjson.dumps(self._pending) + b");\n"
            self._write(f"texts-{index:05d}.js", body)
            self._pending, self._pending_bytes = [], 0

    def piece(self, text: str, start: int, end: int, matches: list[Match]) -> list[Any]:
        """`[offset, id, marks]` of `text[start:end]` with the matches inside it."""
        part = text[start:end]
        marks: list[int] = []
        for match in matches:
            if start <= match.start and match.end <= end:
                before = utf16(text[start : match.start])
                marks += [before, before + utf16(text[match.start : match.end]), match.kind]
        return [utf16(text[:start]), self.add(part), marks]

    def reference(
        self,
        text: str,
        aliases: list[str],
        keywords: list[str],
        form: TextForm,
        context: tuple[str, str] | None = None,
    ) -> list[Any]:
        """A text's reference: whole or excerpts around its matches, with its context."""
        matches = find_matches(text, aliases, keywords)
        spans = excerpt_spans(text, matches, form.around)
        reference: list[Any] = [utf16(text), len(matches), None, None, None, None]
        if form.whole:
            reference[3] = self.piece(text, 0, len(text), matches)[1:]
            if spans != [(0, len(text))]:
                reference[4] = [[utf16(text[:a]), utf16(text[:b])] for a, b in spans]
        else:
            reference[2] = [self.piece(text, a, b, matches) for a, b in spans]
        if context is not None:
            reference[5] = [self.add(context[0]), self.add(context[1])]
        while reference[-1] is None:
            reference.pop()
        return reference
