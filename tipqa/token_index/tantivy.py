"""The embedded token index: tantivy on disk, with tokens identical to `tipqa.text.tokenize`.

The text field is indexed from `tantivy_analysis.prepare(text)` (see that module for why
tantivy's default analyzer is not used), so tantivy's tokens and positions are exactly those of
`tokenize(text)` and a phrase query finds what `tipqa.text.contains_phrase` finds. The original
text is stored apart, as UTF-8 bytes, and frequency is counted on it with `tipqa.text`.

An index is a folder: tantivy's files plus `tipqa-index.json` (format, counts, tokenization,
Unicode version), written last. `build` writes into a hidden sibling folder and renames it into
place, so a folder with the marker is always a finished index. Two builds of one path must not
run at the same time.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import unicodedata
import uuid
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from tqdm import tqdm

from tipqa.errors import ConfigError, InputError
from tipqa.jsonl import read_json, write_json
from tipqa.place import IndexPlace
from tipqa.records import Document, TokenHit
from tipqa.settings import Settings, knob, search_only
from tipqa.text import count_phrase, tokenize
from tipqa.token_index.base import TokenResult
from tipqa.token_index.tantivy_analysis import analyzer, prepare, tokenization

FORMAT = "tipqa-tantivy"
FORMAT_VERSION = 1
MARKER = "tipqa-index.json"
ANALYZER = "tipqa"
MAX_ID_BYTES = 65_000  # tantivy silently skips terms longer than about 65,530 bytes
MIN_HEAP_MB_PER_THREAD = 15  # tantivy's own lower bound for a writer thread's arena
_GET_BATCH = 1024

Phrase = tuple[str, ...]


def _import_tantivy() -> Any:
    """Import tantivy (a core dependency, imported lazily because it is a native extension)."""
    import tantivy

    return tantivy


def _phrases(texts: Iterable[str]) -> list[Phrase]:
    """The distinct non-empty token phrases of `texts`, in first-seen order."""
    return list(dict.fromkeys(p for p in (tuple(tokenize(t)) for t in texts) if p))


def frequency(text: str, phrases: list[Phrase]) -> int:
    """Occurrences of all `phrases` in `text`, counted on `tokenize` tokens."""
    tokens = tokenize(text)
    present = set(tokens)
    return sum(count_phrase(tokens, phrase) for phrase in phrases if present.issuperset(phrase))


def _check_document(document: Document, number: int) -> None:
    """Raise InputError naming the document when its id or text cannot be indexed."""
    where = f"document {number}"
    if not isinstance(document.id, str) or not document.id:
        raise InputError(f"{where}: id must be a non-empty string", field="id")
    if len(document.id.encode()) > MAX_ID_BYTES:
        raise InputError(
            f"{where}: id longer than {MAX_ID_BYTES} bytes ({document.id[:60]!r}...)", field="id"
        )
    if not isinstance(document.text, str):
        raise InputError(f"{where} ({document.id!r}): text must be a string", field="text")


@dataclass(frozen=True)
class TantivySettings(Settings):
    """[token_index] of the tantivy backend."""

    rank_pool: int = search_only(1000, doc="matches ranked exactly by frequency")
    heap_mb: int = knob(512, doc="writer heap in MB (at least 15 per thread)")
    threads: int = knob(2, doc="writer threads")
    commit_every: int = knob(100_000, doc="documents between commits (bounds memory)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.threads < 1:
            raise ConfigError(f"tantivy threads must be at least 1, got {self.threads}")
        if self.heap_mb < MIN_HEAP_MB_PER_THREAD * self.threads:
            raise ConfigError(
                f"tantivy heap_mb must be at least {MIN_HEAP_MB_PER_THREAD} per thread "
                f"({MIN_HEAP_MB_PER_THREAD * self.threads} for {self.threads}), got {self.heap_mb}"
            )
        if self.rank_pool < 1:
            raise ConfigError(f"rank_pool must be at least 1, got {self.rank_pool}")
        if self.commit_every < 1:
            raise ConfigError(f"commit_every must be at least 1, got {self.commit_every}")


class TantivyTokenIndex:
    """A `TokenIndex` in a tantivy folder; phrase queries with exact counts, frequency ranking."""

    def __init__(self, settings: TantivySettings, place: IndexPlace) -> None:
        self.settings = settings
        self.path = Path(place.path)
        self.heap_mb = settings.heap_mb
        self.threads = settings.threads
        self.rank_pool = settings.rank_pool
        self.commit_every = settings.commit_every
        self._index: Any = None
        self._schema: Any = None

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

    @staticmethod
    def _new_schema() -> Any:
        """The schema: exact-id field, analyzed text (positions), stored original text, meta."""
        tantivy = _import_tantivy()
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("doc_id", stored=True, tokenizer_name="raw", index_option="basic")
        builder.add_text_field(
            "text", stored=False, tokenizer_name=ANALYZER, index_option="position"
        )
        builder.add_bytes_field("body", stored=True, indexed=False)
        builder.add_bytes_field("meta", stored=True, indexed=False)
        return builder.build()

    def _remove_leftovers(self) -> None:
        """Delete hidden build or swap folders that an interrupted build left beside `path`."""
        for prefix in (f".{self.path.name}.building-", f".{self.path.name}.old-"):
            for leftover in self.path.parent.glob(prefix + "*"):
                shutil.rmtree(leftover)

    def build(self, documents: Iterable[Document]) -> dict[str, float]:
        """Index `documents` into a fresh index that replaces any old one when complete.

        A document id seen again in the stream is indexed once (the first text wins) and
        counted as a duplicate; a document whose text is blank is skipped and counted as empty.
        Memory is bounded: ids are remembered only since the last commit (every `commit_every`
        documents), older ones are looked up in the index.
        """
        tantivy = _import_tantivy()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._remove_leftovers()
        self._index = None
        started = time.perf_counter()
        building = Path(
            tempfile.mkdtemp(prefix=f".{self.path.name}.building-", dir=self.path.parent)
        )
        try:
            schema = self._new_schema()
            index = tantivy.Index(schema, path=str(building))
            mode = tokenization()
            index.register_tokenizer(ANALYZER, analyzer(mode.kind))
            counts = self._write(index, documents, mode.blank)
            counts["seconds"] = round(time.perf_counter() - started, 3)
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
            self._swap_in(building)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        return counts

    def _write(
        self, index: Any, documents: Iterable[Document], blank: frozenset[str]
    ) -> dict[str, float]:
        """Add the documents through one writer; return the counts."""
        tantivy = _import_tantivy()
        writer = index.writer(self.heap_mb * 1_000_000, self.threads)
        counts: dict[str, float] = {"documents": 0, "duplicates": 0, "empty": 0, "bytes": 0}
        recent: set[str] = set()
        searcher = None
        try:
            for number, document in enumerate(
                tqdm(documents, desc="token index", unit="doc", leave=False), start=1
            ):
                _check_document(document, number)
                if not document.text.strip():
                    counts["empty"] += 1
                    continue
                if document.id in recent or (
                    searcher is not None and searcher.doc_freq("doc_id", document.id) > 0
                ):
                    counts["duplicates"] += 1
                    continue
                body = document.text.encode()
                entry = tantivy.Document()
                entry.add_text("doc_id", document.id)
                entry.add_text("text", prepare(document.text, blank))
                entry.add_bytes("body", body)
                if document.meta:
                    entry.add_bytes("meta", orjson.dumps(document.meta))
                writer.add_document(entry)
                recent.add(document.id)
                counts["documents"] += 1
                counts["bytes"] += len(body)
                if len(recent) >= self.commit_every:
                    writer.commit()
                    index.reload()
                    searcher = index.searcher()
                    recent.clear()
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()
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
            tantivy = _import_tantivy()
            info = self.info()
            if info.get("unicode_version") != unicodedata.unidata_version:
                warnings.warn(
                    f"{self.path}: index built with Unicode {info.get('unicode_version')}, "
                    f"this Python has {unicodedata.unidata_version}: characters new to one of "
                    "them may tokenize differently; rebuild to be exact",
                    stacklevel=3,
                )
            index = tantivy.Index.open(str(self.path))
            self._schema = index.schema
            self._index = index
        return self._index

    def _phrase_query(self, phrase: Phrase) -> Any:
        """A term query for one token, a phrase query for more (no query-string parsing)."""
        tantivy = _import_tantivy()
        if len(phrase) == 1:
            return tantivy.Query.term_query(self._schema, "text", phrase[0], index_option="freq")
        return tantivy.Query.phrase_query(self._schema, "text", list(phrase))

    def _query(self, keywords: list[Phrase], aliases: list[Phrase]) -> Any:
        """All keyword phrases AND any alias phrase."""
        tantivy = _import_tantivy()
        must, should = tantivy.Occur.Must, tantivy.Occur.Should
        alias_query = (
            self._phrase_query(aliases[0])
            if len(aliases) == 1
            else tantivy.Query.boolean_query([(should, self._phrase_query(a)) for a in aliases])
        )
        if not keywords:
            return alias_query
        clauses = [(must, self._phrase_query(k)) for k in keywords]
        return tantivy.Query.boolean_query([*clauses, (must, alias_query)])

    def search(self, keywords: list[str], aliases: list[str], k: int) -> TokenResult:
        """Documents with every keyword and any alias as phrases, by frequency, first k.

        `total` is exact. The ranking is exact when `total <= rank_pool`; beyond that it is
        approximate: the `rank_pool` best matches by tantivy's BM25 are ranked by frequency.
        Frequency counts each distinct phrase of the query (keywords and aliases) once per
        occurrence in the document; ties go to the smaller document id.
        """
        if k < 0:
            raise ConfigError(f"k must be at least 0, got {k}")
        index = self._open()
        alias_phrases = _phrases(aliases)
        if not alias_phrases:
            return TokenResult(total=0, hits=[])
        keyword_phrases = _phrases(keywords)
        searcher = index.searcher()
        result = searcher.search(
            self._query(keyword_phrases, alias_phrases), self.rank_pool, count=True
        )
        phrases = list(dict.fromkeys([*keyword_phrases, *alias_phrases]))
        scored = []
        for _score, address in result.hits:
            stored = searcher.doc(address)
            text = stored.get_first("body").decode()
            scored.append((-frequency(text, phrases), stored.get_first("doc_id")))
        scored.sort()
        hits = [TokenHit(doc_id, float(-negative)) for negative, doc_id in scored[:k]]
        return TokenResult(total=result.count, hits=hits)

    def get(self, doc_ids: list[str]) -> dict[str, Document]:
        """The stored documents with these ids (missing ids are absent from the result)."""
        tantivy = _import_tantivy()
        index = self._open()
        searcher = index.searcher()
        wanted = sorted({i for i in doc_ids if len(i.encode()) <= MAX_ID_BYTES})
        found: dict[str, Document] = {}
        for batch in _batches(wanted, _GET_BATCH):
            query = tantivy.Query.term_set_query(self._schema, "doc_id", batch)
            for _score, address in searcher.search(query, len(batch), count=False).hits:
                stored = searcher.doc(address)
                doc_id = stored.get_first("doc_id")
                meta = stored.get_first("meta")
                found[doc_id] = Document(
                    doc_id, stored.get_first("body").decode(), orjson.loads(meta) if meta else {}
                )
        return found

    def count(self) -> int:
        """Number of documents in the index."""
        return self._open().searcher().num_docs


def _batches(items: list[str], size: int) -> Iterator[list[str]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
