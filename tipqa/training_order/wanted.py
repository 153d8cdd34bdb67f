"""The wanted documents in the model's tokens: where each wanted span lies, and its keys.

Only the wanted documents are tokenized, with the model's own `tokenizer.json` (no special
tokens added: the tokens of a document as the data pipeline wrote them), an EOD token
appended as in the training stream. A span's text (a judge window or a vector chunk) is found
in the document ignoring whitespace (windows are paragraphs re-joined), and turned into the
token range [start, stop) of the tokens that overlap it. Only the tokens a match can need are
kept: the document's first `seq_length + match_tokens`, and `seq_length` on both sides of
each span, so memory follows the spans, not the documents (a wanted book can be millions of
tokens long).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tipqa.core.errors import ConfigError, InputError, MissingExtraError
from tipqa.core.records import Document
from tipqa.training_order.anchors import hash_windows, window_lengths
from tipqa.training_order.base import WantedSpan

ENCODE_BATCH = 256


def load_tokenizer(path: str | os.PathLike[str]) -> Any:
    """A `tokenizers.Tokenizer` from a `tokenizer.json` file."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MissingExtraError("tokenizers", "boundary") from exc
    if not os.path.isfile(path):
        raise InputError("no such tokenizer file", path=str(path))
    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:
        raise InputError(f"cannot load tokenizer: {exc}", path=str(path)) from exc


def eod_id(tokenizer: Any, token: str) -> int:
    """The id of the end-of-document token `token`."""
    found = tokenizer.token_to_id(token)
    if found is None:
        raise ConfigError(f"the tokenizer has no token {token!r}; set the EOD token or its id")
    return int(found)


class TextLocator:
    """Finds parts of one document's text, whitespace ignored (the first place, if several)."""

    def __init__(self, document: str) -> None:
        self.document = document
        self._positions: list[int] | None = None
        self._compact = ""

    def locate(self, part: str) -> tuple[int, int] | None:
        """Character range [start, stop) of `part` in the document; None when absent."""
        exact = self.document.find(part) if part else -1
        if exact >= 0:
            return exact, exact + len(part)
        if self._positions is None:
            self._positions = [i for i, char in enumerate(self.document) if not char.isspace()]
            self._compact = "".join(self.document[i] for i in self._positions)
        wanted = "".join(part.split())
        found = self._compact.find(wanted) if wanted else -1
        if found < 0:
            return None
        return self._positions[found], self._positions[found + len(wanted) - 1] + 1


@dataclass
class WantedDocument:
    """A wanted document's tokens (the needed ranges of them) and its spans' token ranges."""

    doc_id: str
    length: int
    segments: list[tuple[int, np.ndarray]]
    spans: list[tuple[str, int, int]] = field(default_factory=list)
    by_document: set[str] = field(default_factory=set)

    def tokens(self, start: int, stop: int) -> np.ndarray:
        """Tokens [start, stop) (cut at the document's end); they must have been kept."""
        stop = min(stop, self.length)
        for first, array in self.segments:
            if first <= start and stop <= first + len(array):
                return array[start - first : stop - first]
        raise ValueError(f"{self.doc_id}: tokens {start}-{stop} were not kept")


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return merged


def token_range(offsets: np.ndarray, start: int, stop: int) -> tuple[int, int]:
    """The tokens whose characters overlap [start, stop) (offsets: (n, 2) char ranges)."""
    first = int(np.searchsorted(offsets[:, 1], start, side="right"))
    last = int(np.searchsorted(offsets[:, 0], stop, side="left"))
    return first, max(first, last)


def prepare_documents(
    spans: Sequence[WantedSpan],
    documents: dict[str, Document],
    tokenizer: Any,
    *,
    eod: int,
    seq_length: int,
    width: int,
) -> list[WantedDocument]:
    """Tokenize the spans' documents; a span whose text is absent or not found covers all.

    Spans of documents missing from `documents` are left out (the caller reports them).
    """
    by_doc: dict[str, list[WantedSpan]] = {}
    for span in spans:
        if span.doc_id in documents:
            by_doc.setdefault(span.doc_id, []).append(span)
    doc_ids = list(by_doc)
    out: list[WantedDocument] = []
    for start in range(0, len(doc_ids), ENCODE_BATCH):
        chunk = doc_ids[start : start + ENCODE_BATCH]
        encodings = tokenizer.encode_batch(
            [documents[d].text for d in chunk], add_special_tokens=False
        )
        for doc_id, encoding in zip(chunk, encodings, strict=True):
            out.append(
                _wanted(
                    doc_id, documents[doc_id].text, encoding, by_doc[doc_id], eod, seq_length, width
                )
            )
    return out


def _wanted(
    doc_id: str,
    text: str,
    encoding: Any,
    spans: list[WantedSpan],
    eod: int,
    seq_length: int,
    width: int,
) -> WantedDocument:
    ids = np.asarray([*encoding.ids, eod], dtype=np.int64)
    offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
    body = len(ids) - 1
    ranges: list[tuple[str, int, int]] = []
    whole: set[str] = set()
    locator = TextLocator(text)
    for span in spans:
        found = locator.locate(span.text) if span.text else None
        first, stop = token_range(offsets, *found) if found else (0, body)
        if found is None or stop <= first:
            first, stop = 0, body
            whole.add(span.span_id)
        ranges.append((span.span_id, first, stop))
    keep = [(0, seq_length + width)]
    keep += [(first - seq_length, stop + seq_length) for _, first, stop in ranges]
    kept = [(max(0, a), min(len(ids), b)) for a, b in _merge(keep) if min(len(ids), b) > max(0, a)]
    segments = [(a, ids[a:b].copy()) for a, b in _merge(kept)]
    return WantedDocument(doc_id, len(ids), segments, ranges, whole)


@dataclass
class Keys:
    """Hashed windows of wanted documents, sorted, with who owns each (doc, offset, length)."""

    hashes: np.ndarray
    docs: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray

    def lookup(self, found: np.ndarray) -> np.ndarray:
        """Positions in `found` whose hash is a key."""
        if not self.hashes.size or not found.size:
            return np.zeros(0, dtype=np.int64)
        where = np.searchsorted(self.hashes, found)
        where = np.minimum(where, self.hashes.size - 1)
        return np.flatnonzero(self.hashes[where] == found)

    def owners(self, value: np.uint64) -> range:
        """Indexes of the keys equal to `value`."""
        left = int(np.searchsorted(self.hashes, value, side="left"))
        right = int(np.searchsorted(self.hashes, value, side="right"))
        return range(left, right)


def make_keys(
    documents: Sequence[WantedDocument],
    wanted: Sequence[tuple[int, int]] | np.ndarray,
    *,
    width: int,
    eod: int,
    limits: Sequence[int] | None = None,
) -> Keys:
    """Keys of the windows at (document index, offset) pairs: the tokens from there on.

    A window has `width` tokens, fewer when an EOD ends it first or `limits` caps it.
    """
    pairs = np.asarray(wanted, dtype=np.int64).reshape(-1, 2)
    if not len(pairs):
        empty = np.zeros(0, dtype=np.int64)
        return Keys(np.zeros(0, dtype=np.uint64), empty, empty, empty)
    windows = np.full((len(pairs), width), eod, dtype=np.int64)
    order = np.argsort(pairs[:, 0], kind="stable")
    bounds = np.flatnonzero(np.diff(pairs[order, 0])) + 1
    for rows in np.split(order, bounds):
        doc = documents[int(pairs[rows[0], 0])]
        offsets = pairs[rows, 1]
        for first, array in doc.segments:
            inside = (offsets >= first) & (offsets < first + len(array))
            if not inside.any():
                continue
            padded = np.append(array, np.full(width, eod, dtype=array.dtype))
            where = offsets[inside, None] - first + np.arange(width)[None, :]
            windows[rows[inside]] = padded[where]
    lengths, _ = window_lengths(windows, eod, width)
    if limits is not None:
        lengths = np.minimum(lengths, np.asarray(limits, dtype=np.int64))
    hashes = hash_windows(windows, lengths)
    ranked = np.argsort(hashes, kind="stable")
    return Keys(hashes[ranked], pairs[ranked, 0], pairs[ranked, 1], lengths[ranked])
