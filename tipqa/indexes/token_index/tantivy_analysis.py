"""Text analysis for the tantivy index that yields exactly the tokens of `tipqa.core.text.tokenize`.

tantivy's default analyzer is close to `tokenize` but not equal to it: it keeps combining marks
(Devanagari vowel signs, Hebrew points), letter-like symbols (ⓐ) and characters newer than this
Python's Unicode tables inside tokens; it measures the 40 limit in UTF-8 bytes and drops tokens
of exactly 40 bytes; it lower-cases after splitting (İ, final sigma); and it leaves a position
gap where it drops a long token. So the index does not rely on it.

Python prepares the text instead (`prepare`): lower-cased as `tokenize` does, characters that
tantivy would keep but `tokenize` does not turned into spaces, and runs that `tokenize` drops as
too long removed. tantivy then only has to split the prepared text into runs of token
characters. Its simple tokenizer does that when every token character of this Python is
alphanumeric for tantivy's Rust code; otherwise (a Python with newer Unicode tables than the
tantivy build) a regex tokenizer whose class lists this Python's token characters by code point
is used: exact as well, but about half as fast. Which one applies is found by probing every code
point once per process.
"""

from __future__ import annotations

import array
import functools
import re
import sys
from typing import Any, NamedTuple

from tipqa.core.text import MAX_TOKEN_CHARS, TOKEN_RE
from tipqa.indexes.token_index import speedups
from tipqa.indexes.token_index.tantivy_schema import analyse_ascii, prepared_repeats

_MAX_REPLACES = 8  # above this many distinct characters to space out, one translate pass
_native = speedups.native()
_analyse_ascii = analyse_ascii if _native is None else _native.analyse_ascii
_repeats = prepared_repeats if _native is None else _native.repeats


class Tokenization(NamedTuple):
    """How tantivy splits prepared text: `kind` is simple or regex; `blank`: chars to space out."""

    kind: str
    blank: frozenset[str]


def _import_tantivy() -> Any:
    """Import tantivy (a core dependency, imported lazily because it is a native extension)."""
    import tantivy

    return tantivy


@functools.lru_cache(maxsize=1)
def all_characters() -> str:
    """Every Unicode scalar value, in code point order."""
    code_points = array.array("I", range(0xD800))
    code_points.extend(range(0xE000, 0x110000))
    return code_points.tobytes().decode(f"utf-32-{sys.byteorder[0]}e")


def _ranges(code_points: list[int]) -> list[tuple[int, int]]:
    """Sorted code points as (first, last) runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for cp in code_points:
        if runs and runs[-1][1] == cp - 1:
            runs[-1] = (runs[-1][0], cp)
        else:
            runs.append((cp, cp))
    return runs


def _token_code_points() -> list[int]:
    """The code points that `tipqa.core.text` counts as token characters."""
    return [ord(c) for c in TOKEN_RE.findall(" ".join(all_characters()))]


@functools.lru_cache(maxsize=1)
def token_char_pattern() -> str:
    """A Rust regex matching runs of the characters that `tipqa.core.text` puts in tokens."""
    parts = (
        f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}"
        for a, b in _ranges(_token_code_points())
    )
    return "[" + "".join(parts) + "]+"


def _simple_analyzer() -> Any:
    """tantivy's simple tokenizer alone: runs of Rust-alphanumeric characters, as written."""
    tantivy = _import_tantivy()
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()


@functools.lru_cache(maxsize=1)
def tokenization() -> Tokenization:
    """Probe every code point and choose the fastest exact tokenization."""
    separated = " ".join(all_characters())
    rust = {ord(c) for c in _simple_analyzer().analyze(separated)}
    python = set(_token_code_points())
    if not python <= rust:
        return Tokenization("regex", frozenset())
    return Tokenization("simple", frozenset(map(chr, rust - python)))


def analyzer(kind: str) -> Any:
    """The tantivy analyzer of `kind` ("simple" or "regex") for prepared text."""
    if kind == "simple":
        return _simple_analyzer()
    if kind == "regex":
        tantivy = _import_tantivy()
        return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(token_char_pattern())).build()
    raise ValueError(f"unknown tokenization kind {kind!r}")


def _drop_long(run: re.Match[str]) -> str:
    """Keep a token run unless `tokenize` would drop it for its length."""
    return "" if len(run.group()) > MAX_TOKEN_CHARS else run.group()


def prepare(text: str, blank: frozenset[str]) -> str:
    """The text tantivy indexes: lower-cased, `blank` characters spaced, long runs removed.

    Only whitespace-separated chunks longer than the token limit can hold runs that `tokenize`
    drops; when there are any, the chunks are joined again by single spaces, which leaves the
    tokens and their order unchanged. In C where `tipqa.indexes.token_index.speedups` was compiled.
    """
    return prepare_lowered(text.lower(), blank)


def prepare_lowered(lowered: str, blank: frozenset[str]) -> str:
    """`prepare` of text already lower-cased."""
    if _native is not None:
        return _native.prepare(lowered, code_point_bitmap(blank))
    return prepare_in_python(lowered, blank)


@functools.lru_cache(maxsize=4)
def code_point_bitmap(chars: frozenset[str]) -> bytes:
    """A bitmap of these characters' code points (bit c % 8 of byte c // 8)."""
    bitmap = bytearray(max(map(ord, chars), default=0) // 8 + 1)
    for char in chars:
        bitmap[ord(char) >> 3] |= 1 << (ord(char) & 7)
    return bytes(bitmap)


def prepare_in_python(lowered: str, blank: frozenset[str]) -> str:
    """`prepare_lowered` without the C speed-ups."""
    if blank and not lowered.isascii():
        found = blank.intersection(lowered)
        if len(found) > _MAX_REPLACES:
            lowered = lowered.translate(dict.fromkeys(map(ord, found), " "))
        else:
            for char in found:
                lowered = lowered.replace(char, " ")
    chunks = lowered.split()
    if max(map(len, chunks), default=0) <= MAX_TOKEN_CHARS:
        return lowered
    return " ".join(
        TOKEN_RE.sub(_drop_long, chunk) if len(chunk) > MAX_TOKEN_CHARS else chunk
        for chunk in chunks
    )


def analyse(text: str, blank: frozenset[str]) -> tuple[str, str]:
    """The text tantivy indexes (`prepare`) and the document's `repeats` field value.

    Lower-cased ASCII text, the common case, is split once for both; other text is prepared
    and then split into the tokens of `tipqa.core.text`. Both in C where
    `tipqa.indexes.token_index.speedups` was compiled.
    """
    lowered = text.lower()
    if not lowered.isascii():
        prepared = prepare_lowered(lowered, blank)
        return prepared, _repeats(prepared)
    kept, repeats = _analyse_ascii(lowered.encode())
    return lowered if kept is None else kept, repeats
