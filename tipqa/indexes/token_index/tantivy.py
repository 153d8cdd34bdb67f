"""The embedded token index: tantivy on disk, with tokens identical to `tipqa.core.text.tokenize`.

The text field is indexed from `tantivy_analysis.prepare(text)` (see that module for why
tantivy's default analyzer is not used), so tantivy's tokens and positions are exactly those of
`tokenize(text)` and a phrase query finds what `tipqa.core.text.contains_phrase` finds. Each token's
frequency in each document is indexed as well (`tantivy_schema`), so that frequency ranking
runs inside tantivy, exact at any number of matches (`tantivy_rank`). The original text is
stored apart, as UTF-8 bytes.

`rank_texts` ranks documents for free text by tantivy's own BM25 on the `text` field
(`tipqa.indexes.token_index.base.RanksText`).

The build uses `threads` worker processes, each writing a part of the index, joined into one
index at the end (`tantivy_build`, `tantivy_assemble`).

An index is a folder: tantivy's files plus `tipqa-index.json` (format, counts, tokenization,
Unicode version), written last. `build` writes into a hidden sibling folder and renames it into
place, so a folder with the marker is always a finished index. Two builds of one path must not
run at the same time.
"""

from __future__ import annotations

import os
import shutil
import time
import unicodedata
import uuid
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_json, write_json
from tipqa.core.records import Document
from tipqa.core.scratch import follow_umask, scratch_folder
from tipqa.core.settings import Settings, knob, search_only
from tipqa.core.text import tokenize
from tipqa.indexes.place import IndexPlace
from tipqa.indexes.token_index import tantivy_narrow
from tipqa.indexes.token_index import tantivy_schema as fields
from tipqa.indexes.token_index.base import TokenResult
from tipqa.indexes.token_index.tantivy_analysis import analyzer, tokenization
from tipqa.indexes.token_index.tantivy_assemble import assemble, finish
from tipqa.indexes.token_index.tantivy_build import (
    MAX_ID_BYTES,
    MIN_HEAP_MB_PER_WRITER,
    available_cores,
    write_parts,
)
from tipqa.indexes.token_index.tantivy_ids import IdTable
from tipqa.indexes.token_index.tantivy_query import phrases
from tipqa.indexes.token_index.tantivy_rank import Ranker
from tipqa.indexes.token_index.tantivy_verify import frequency

__all__ = ["TantivySettings", "TantivyTokenIndex", "frequency"]

FORMAT = "tipqa-tantivy"
FORMAT_VERSION = 2
MARKER = "tipqa-index.json"
_GET_BATCH = 1024
_TIE_MARGIN = 16  # BM25 hits fetched beyond n, so that ties at the cut are seen


@dataclass(frozen=True)
class TantivySettings(Settings):
    """[token_index] of the tantivy backend.

    `ranking = "bm25-pool"` is an approximation: the `rank_pool` best matches by
    tantivy's BM25, ranked by frequency (exact only up to `rank_pool` matches).
    """

    ranking: Literal["exact", "bm25-pool"] = search_only(
        "exact", doc="frequency ranking: exact at any number of matches, or bm25-pool"
    )
    rank_pool: int = search_only(1000, doc="with bm25-pool: matches ranked by frequency")
    heap_mb: int = knob(512, doc="writer memory in MB, shared by the worker processes")
    threads: int = knob(0, doc="worker processes that write the index (0: one per core)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.threads < 0:
            raise ConfigError(f"tantivy threads must be at least 0 (all cores), got {self.threads}")
        if self.heap_mb < MIN_HEAP_MB_PER_WRITER:
            raise ConfigError(
                f"tantivy heap_mb must be at least {MIN_HEAP_MB_PER_WRITER}, got {self.heap_mb}"
            )
        if self.rank_pool < 1:
            raise ConfigError(f"rank_pool must be at least 1, got {self.rank_pool}")

    def build_identity(self) -> dict[str, Any]:
        """The build's settings and the index format, so an index of an older format is rebuilt."""
        return {**super().build_identity(), "format_version": FORMAT_VERSION}

    def workers(self) -> int:
        """The number of processes a build uses."""
        return self.threads or available_cores()


class TantivyTokenIndex:
    """A `TokenIndex` in a tantivy folder; phrase queries with exact counts, frequency ranking.

    Also `RanksText`: BM25 ranking of free text.
    """

    def __init__(self, settings: TantivySettings, place: IndexPlace) -> None:
        self.settings = settings
        self.path = Path(place.path)
        self._index: Any = None
        self._ids: IdTable | None = None

    @classmethod
    def at(cls, path: str | os.PathLike[str], **settings: Any) -> TantivyTokenIndex:
        """The index in folder `path`, with `TantivySettings(**settings)` (library use)."""
        return cls(TantivySettings(**settings), IndexPlace(Path(path)))

    def complete(self) -> bool:
        """True when `path` holds a finished index (its marker file exists)."""
        return (self.path / MARKER).is_file()

    def info(self) -> dict[str, Any]:
        """The marker of the finished index: format, counts of its build, Unicode version."""
        if not self.complete():
            raise InputError(
                "no finished tantivy index here (run build first)", path=str(self.path)
            )
        data = read_json(self.path / MARKER)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"not a {FORMAT} index marker", path=str(self.path / MARKER))
        if data.get("format_version") != FORMAT_VERSION:
            raise InputError(
                f"index format version {data.get('format_version')!r}, this code reads "
                f"{FORMAT_VERSION}: rebuild the index",
                path=str(self.path / MARKER),
            )
        return data

    # building

    def _remove_leftovers(self) -> None:
        """Delete hidden build or swap folders that an interrupted build left beside `path`."""
        for prefix in (f".{self.path.name}.building-", f".{self.path.name}.old-"):
            for leftover in self.path.parent.glob(prefix + "*"):
                shutil.rmtree(leftover)

    def build(self, documents: Iterable[Document]) -> dict[str, float]:
        """Index `documents` into a fresh index that replaces any old one when complete.

        A document id seen again in the stream is indexed once (the first text wins) and
        counted as a duplicate; a document whose text is blank is skipped and counted as empty.
        """
        tantivy = fields.import_tantivy()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._remove_leftovers()
        self._index = self._ids = None
        started = time.perf_counter()
        building = scratch_folder(self.path.parent, prefix=f".{self.path.name}.building-")
        try:
            mode = tokenization()
            workers = self.settings.workers()
            stream = write_parts(documents, building, workers, self.settings.heap_mb, mode)
            if len(stream.parts) > 1:
                assemble(stream.parts, building)
            index = tantivy.Index.open(str(building))
            removed = finish(
                index, building, stream.parts, analyzer(mode.kind), self.settings.heap_mb
            )
            counts: dict[str, float] = {
                "documents": stream.documents - removed["duplicates"],
                "duplicates": removed["duplicates"],
                "empty": stream.empty,
                "bytes": removed["bytes"],
                "workers": len(stream.parts),
                "seconds": round(time.perf_counter() - started, 3),
            }
            write_json(
                building / MARKER,
                {
                    "format": FORMAT,
                    "format_version": FORMAT_VERSION,
                    "counts": counts,
                    "tokenizer": mode.kind,
                    "unicode_version": unicodedata.unidata_version,
                    "tantivy_version": tantivy.__version__,
                },
            )
            follow_umask(building)
            self._swap_in(building)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        return counts

    def _swap_in(self, building: Path) -> None:
        """Rename the finished folder to `path`, moving an old index aside and deleting it."""
        old = None
        if self.path.exists():
            old = self.path.with_name(f".{self.path.name}.old-{uuid.uuid4().hex}")
            os.rename(self.path, old)
        os.rename(building, self.path)
        if old is not None:
            shutil.rmtree(old)

    # reading

    def _open(self) -> Any:
        """The opened index (once), checked to be finished and of this format."""
        if self._index is None:
            tantivy = fields.import_tantivy()
            info = self.info()
            if info.get("unicode_version") != unicodedata.unidata_version:
                warnings.warn(
                    f"{self.path}: index built with Unicode {info.get('unicode_version')}, "
                    f"this Python has {unicodedata.unidata_version}: characters new to one of "
                    "them may tokenize differently; rebuild to be exact",
                    stacklevel=3,
                )
            self._index = tantivy.Index.open(str(self.path))
            self._ids = IdTable(self.path)
        return self._index

    def search(self, keywords: list[str], aliases: list[str], k: int) -> TokenResult:
        """Documents with every keyword and any alias as phrases, by frequency, first k.

        `total` is exact. Frequency counts each distinct phrase of the query (keywords and
        aliases) once per occurrence in the document (overlapping occurrences included); ties
        go to the smaller document id. With `ranking = "bm25-pool"` the ranking is exact only
        up to `rank_pool` matches.
        """
        if k < 0:
            raise ConfigError(f"k must be at least 0, got {k}")
        index = self._open()
        alias_phrases = phrases(aliases)
        if not alias_phrases:
            return TokenResult(total=0, hits=[])
        assert self._ids is not None
        ranker = Ranker(index.searcher(), index.schema, self._ids)
        keyword_phrases = phrases(keywords)
        if self.settings.ranking == "bm25-pool":
            return ranker.pooled_search(keyword_phrases, alias_phrases, k, self.settings.rank_pool)
        narrowed = tantivy_narrow.search(ranker, keyword_phrases, alias_phrases, k)
        return (
            narrowed if narrowed is not None else ranker.search(keyword_phrases, alias_phrases, k)
        )

    def get(self, doc_ids: list[str]) -> dict[str, Document]:
        """The stored documents with these ids (missing ids are absent from the result)."""
        tantivy = fields.import_tantivy()
        index = self._open()
        searcher = index.searcher()
        wanted = sorted({i for i in doc_ids if len(i.encode()) <= MAX_ID_BYTES})
        found: dict[str, Document] = {}
        for batch in _batches(wanted, _GET_BATCH):
            query = tantivy.Query.term_set_query(index.schema, fields.DOC_ID, batch)
            for _score, address in searcher.search(query, len(batch), count=False).hits:
                stored = searcher.doc(address)
                doc_id = stored.get_first(fields.DOC_ID)
                meta = stored.get_first(fields.META)
                found[doc_id] = Document(
                    doc_id,
                    stored.get_first(fields.BODY).decode(),
                    orjson.loads(meta) if meta else {},
                )
        return found

    def count(self) -> int:
        """Number of documents in the index."""
        return self._open().searcher().num_docs

    def rank_texts(self, texts: list[str], n: int) -> list[list[str]]:
        """Per text, the ids of its n best documents by tantivy's BM25, ties by smaller id.

        A text is a boolean query of `Should` term queries, one per distinct token of
        `tokenize(text)`, scored by tantivy (BM25's k1 = 1.2, b = 0.75; see `RanksText`).
        tantivy orders equal scores by its own document addresses, so n + 16 hits are fetched,
        and more (twice as many each time) while the last one fetched still scores as high as
        the n-th: then every document tied with the n-th is among the hits, which are ordered
        by score, then id, and cut at n.
        """
        if n < 1:
            raise ConfigError(f"n must be at least 1, got {n}")
        index = self._open()
        assert self._ids is not None
        searcher = index.searcher()
        ranked = []
        for text in texts:
            tokens = list(dict.fromkeys(tokenize(text)))
            ranked.append(_bm25_best(searcher, index.schema, self._ids, tokens, n))
        return ranked


def _bm25_best(searcher: Any, schema: Any, table: IdTable, tokens: list[str], n: int) -> list[str]:
    """The ids of the n best documents by BM25 for any of `tokens`, ties by smaller id."""
    if not tokens:
        return []
    tantivy = fields.import_tantivy()
    should = tantivy.Occur.Should
    query = tantivy.Query.boolean_query(
        [
            (should, tantivy.Query.term_query(schema, fields.TEXT, t, index_option="freq"))
            for t in tokens
        ]
    )
    limit = n + _TIE_MARGIN
    while True:
        hits = searcher.search(query, limit, count=False).hits
        if len(hits) < limit or hits[-1][0] < hits[n - 1][0]:
            break
        limit *= 2
    if not hits:
        return []
    rows = searcher.fast_field_values(fields.ROW, [address for _, address in hits])
    scored = sorted(zip([-score for score, _ in hits], table.ids(rows), strict=True))
    return [doc_id for _, doc_id in scored[:n]]


def _batches(items: list[str], size: int) -> Iterator[list[str]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
