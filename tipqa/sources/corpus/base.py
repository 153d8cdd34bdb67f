"""The corpus seam: an iterable of documents that counts what it read and what it skipped.

Every reader turns raw records (JSON objects, Parquet rows, dataset rows) into
`tipqa.core.records.Document` through one `DocumentParser`, so all of them agree on fields, derived
ids and how bad records are skipped (counted in `stats.errors` by kind and logged with the file
and line) or, with `strict=True`, raised as an `InputError` naming file, line and field.

A document whose id an earlier one has (`duplicate_ids`) is by default kept under a derived id,
the id followed by `#` and its occurrence (`d2#2`), with a warning naming the id, file and line
(the first few; the stats count them all and list the first derived ids); `first` skips it
(a counted skip), `refuse` raises an InputError. Every index of a build reads the same ids.

A build reads its corpus twice, once for each index; only the token index build logs the skips
(the vector index build reads inside `skips_logged_at_debug`), so each bad record is warned
about once per build and counted in both builds' stats.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Document
from tipqa.core.registry import Registry
from tipqa.core.stats import StepStats

log = logging.getLogger(__name__)

MISSING = object()
WARNINGS_PER_KIND = 20
RENAMED_WARNINGS = 5
RENAMED_LISTED = 20
DuplicateIds = Literal["keep", "first", "refuse"]
Repeats = dict[tuple[str, int], str | None]
"""Where a document's id repeats an earlier one's (file, line), and the id it takes (None:
skipped), as one pass over the whole corpus decides it."""
_SKIPS_AT_DEBUG: ContextVar[bool] = ContextVar("tipqa_skips_at_debug", default=False)


@contextmanager
def skips_logged_at_debug() -> Iterator[None]:
    """Within the block, skipped records are counted as always but logged at DEBUG only.

    For a reader of a corpus whose skips another reader of the same build already logs.
    """
    token = _SKIPS_AT_DEBUG.set(True)
    try:
        yield
    finally:
        _SKIPS_AT_DEBUG.reset(token)


@runtime_checkable
class Corpus(Protocol):
    """An iterable of documents with counters of documents, bytes of text and skips by kind."""

    stats: StepStats

    def __iter__(self) -> Iterator[Document]:
        """Yield the corpus's documents in a deterministic order."""
        ...


@runtime_checkable
class ReadsFiles(Protocol):
    """Corpus settings that name local files (they identify the corpus: path, size, time)."""

    def files(self) -> list[Path]:
        """The corpus files, sorted."""
        ...


class ReaderFields(Protocol):
    """The reader keys of a corpus's settings that its `DocumentParser` applies."""

    @property
    def text_field(self) -> str:
        """Field of the text (dotted names work)."""
        ...

    @property
    def id_field(self) -> str | None:
        """Field of the id (None or empty: ids derived from file and line)."""
        ...

    @property
    def meta_fields(self) -> tuple[str, ...] | None:
        """Fields kept as meta (None: all)."""
        ...

    @property
    def strict(self) -> bool:
        """A bad record is an InputError, not a counted skip."""
        ...

    @property
    def max_chars(self) -> int | None:
        """Skip longer documents (counted)."""
        ...


CORPUS_READERS: Registry[Corpus] = Registry("corpus reader")
CORPUS_READERS.add(
    "files",
    "tipqa.sources.corpus.files:FileCorpus",
    settings="tipqa.sources.corpus.files:FileCorpusSettings",
)
CORPUS_READERS.add(
    "hub",
    "tipqa.sources.corpus.hub:HubCorpus",
    settings="tipqa.sources.corpus.hub:HubCorpusSettings",
)


def check_duplicate_policy(check_duplicates: bool, duplicate_ids: DuplicateIds) -> None:
    """ConfigError when repeated ids are not looked for but should be kept or refused."""
    if not check_duplicates and duplicate_ids != "first":
        raise ConfigError(
            f"[corpus] check_duplicates = false cannot {duplicate_ids} repeated ids: set "
            "duplicate_ids = first (each index then keeps the first copy of an id)"
        )


def get_field(record: dict[str, Any], name: str) -> Any:
    """Value of `name` in `record`; a dotted name walks nested objects. MISSING when absent.

    A key that itself contains dots (a flattened column such as "meta.pile_set_name") is
    found first, so both nested and flattened layouts work.
    """
    if name in record:
        return record[name]
    value: Any = record
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


class DocumentParser:
    """Turns raw records into Documents, counting (or raising on) the bad ones."""

    def __init__(
        self,
        stats: StepStats,
        fields: ReaderFields,
        *,
        check_duplicates: bool = True,
        duplicate_ids: DuplicateIds = "keep",
        seen: set[bytes] | None = None,
        repeats: Counter[str] | None = None,
        decided: Repeats | None = None,
        assigned: Repeats | None = None,
    ) -> None:
        """`fields`: the reader keys of the corpus's settings; `check_duplicates`: look for
        repeated ids, and `duplicate_ids` what to do with one; `seen` (the digests of ids read
        so far) and `repeats` (the occurrences of repeated ids) are shared by parsers of one
        corpus. `decided` collects what was done with each repeated id; `assigned` (what a
        pass over the whole corpus decided) is applied instead of looking for repeats, so a
        file read on its own gets the ids the whole corpus gives it."""
        if not fields.text_field:
            raise ValueError("text_field must be a non-empty field name")
        self.stats = stats
        self.fields = fields
        self.check_duplicates = check_duplicates
        self.duplicate_ids = duplicate_ids
        self._seen: set[bytes] = set() if seen is None else seen
        self._repeats: Counter[str] = Counter() if repeats is None else repeats
        self._decided = decided
        self._assigned = assigned
        self._warned: Counter[str] = Counter()

    def reset(self) -> None:
        """Forget the ids seen so far (a new pass over the corpus)."""
        self._seen.clear()
        self._repeats.clear()
        self._warned.clear()

    def skip(
        self, kind: str, message: str, *, path: str, line: int, field: str | None = None
    ) -> None:
        """Count and log a skipped record, or raise InputError when strict."""
        if self.fields.strict:
            raise InputError(message, path=path, line=line, field=field)
        self.stats.error(kind)
        where = f"{path}, line {line}" + (f", field {field!r}" if field else "")
        if _SKIPS_AT_DEBUG.get():
            log.debug("skipped record (%s) at %s: %s", kind, where, message)
            return
        self._warned[kind] += 1
        if self._warned[kind] <= WARNINGS_PER_KIND:
            log.warning("skipped record (%s) at %s: %s", kind, where, message)
            if self._warned[kind] == WARNINGS_PER_KIND:
                log.warning("further %r skips are logged at DEBUG level only", kind)
        else:
            log.debug("skipped record (%s) at %s: %s", kind, where, message)

    def parse(
        self, record: Any, *, origin: str, path: str, line: int, doc_id: str | None = None
    ) -> Document | None:
        """The Document of one record, or None when it was skipped.

        `origin` names the file (or dataset split) for derived ids "{origin}:{line}"; `path`
        and `line` name the place in messages. `doc_id` is the id when the file's format
        gives it (a plain-text file's path) rather than a field.
        """
        self.stats.add("records")
        if not isinstance(record, dict):
            kind = type(record).__name__
            self.skip("not_object", f"expected a JSON object, got {kind}", path=path, line=line)
            return None
        text = get_field(record, self.fields.text_field)
        if text is MISSING or text is None:
            self.skip(
                "missing_text", "no text field", path=path, line=line, field=self.fields.text_field
            )
            return None
        if not isinstance(text, str):
            message = f"text must be a string, got {type(text).__name__}"
            self.skip(
                "text_not_string", message, path=path, line=line, field=self.fields.text_field
            )
            return None
        if not text.strip():
            self.skip(
                "empty_text", "empty text", path=path, line=line, field=self.fields.text_field
            )
            return None
        if self.fields.max_chars is not None and len(text) > self.fields.max_chars:
            message = f"text of {len(text)} characters exceeds max_chars={self.fields.max_chars}"
            self.skip("too_long", message, path=path, line=line, field=self.fields.text_field)
            return None
        doc_id = self._document_id(record, origin=origin, path=path, line=line, given=doc_id)
        if doc_id is None:
            return None
        meta = self._meta(record)
        self.stats.add("documents")
        self.stats.add("text_bytes", len(text.encode("utf-8", "surrogatepass")))
        return Document(id=doc_id, text=text, meta=meta)

    def _document_id(
        self, record: dict[str, Any], *, origin: str, path: str, line: int, given: str | None
    ) -> str | None:
        """The record's own id (strings and integers) or "{origin}:{line}" when it has none."""
        id_field = self.fields.id_field or None
        value: Any = MISSING if id_field is None else get_field(record, id_field)
        if given is not None:
            doc_id = given
        elif value is MISSING or value is None:
            doc_id = f"{origin}:{line}"
            self.stats.add("derived_ids")
        elif isinstance(value, str) and value.strip():
            doc_id = value
        elif isinstance(value, int) and not isinstance(value, bool):
            doc_id = str(value)
        else:
            message = f"id must be a non-empty string or an integer, got {value!r:.60}"
            self.skip("invalid_id", message, path=path, line=line, field=id_field)
            return None
        if self._assigned is not None:
            if (path, line) not in self._assigned:
                return doc_id
            return self._apply(doc_id, self._assigned[(path, line)], path=path, line=line)
        if self.check_duplicates and not self._first_sight(doc_id):
            derived = self._repeated(doc_id, path=path, line=line)
            if self._decided is not None:
                self._decided[(path, line)] = derived
            return self._apply(doc_id, derived, path=path, line=line)
        return doc_id

    def _first_sight(self, doc_id: str) -> bool:
        """True when no earlier document had `doc_id` (which is then remembered)."""
        key = hashlib.blake2b(doc_id.encode("utf-8", "surrogatepass"), digest_size=12).digest()
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def _repeated(self, doc_id: str, *, path: str, line: int) -> str | None:
        """The id under which a document whose id an earlier one has is kept (None: skipped).

        `keep`: the id followed by `#` and its occurrence (the next one free); `first`: None;
        `refuse`: InputError.
        """
        if self.duplicate_ids == "refuse":
            raise InputError(
                f"id {doc_id!r} repeats an earlier document's (set [corpus] duplicate_ids = "
                "keep or first)",
                path=path,
                line=line,
            )
        if self.duplicate_ids == "first":
            return None
        self._repeats[doc_id] += 1
        occurrence = self._repeats[doc_id] + 1
        derived = f"{doc_id}#{occurrence}"
        while not self._first_sight(derived):
            occurrence += 1
            derived = f"{doc_id}#{occurrence}"
        self._repeats[doc_id] = occurrence - 1
        return derived

    def _apply(self, doc_id: str, derived: str | None, *, path: str, line: int) -> str | None:
        """Count a repeated id, and skip its document (None) or list and warn of its new id."""
        self.stats.add("duplicate_ids")
        message = f"id {doc_id!r} repeats an earlier document's"
        if derived is None:
            self.skip("duplicate_id", message, path=path, line=line)
            return None
        renamed: list[str] = self.stats.info.setdefault("renamed_ids", [])
        if len(renamed) < RENAMED_LISTED:
            renamed.append(f"{derived} ({path}, line {line})")
        self._warn_renamed(f"{message}: indexed as {derived!r} at {path}, line {line}")
        return derived

    def _warn_renamed(self, message: str) -> None:
        """Log the first few repeated ids, then say that the others are only counted."""
        if _SKIPS_AT_DEBUG.get():
            log.debug("%s", message)
            return
        self._warned["renamed"] += 1
        count = self._warned["renamed"]
        if count <= RENAMED_WARNINGS:
            log.warning("%s", message)
        elif count == RENAMED_WARNINGS + 1:
            log.warning(
                "further documents with repeated ids are kept under derived ids and counted "
                "(the index stats' corpus.duplicate_ids; the report lists the first %d)",
                RENAMED_LISTED,
            )

    def _meta(self, record: dict[str, Any]) -> dict[str, Any]:
        """Every other top-level field by default, else the requested (dotted) fields present."""
        if self.fields.meta_fields is None:
            own = (self.fields.text_field, self.fields.id_field or None)
            return {k: v for k, v in record.items() if k not in own}
        meta: dict[str, Any] = {}
        for name in self.fields.meta_fields:
            value = get_field(record, name)
            if value is not MISSING:
                meta[name] = value
        return meta
