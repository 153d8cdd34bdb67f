"""Corpus reader for local files, streamed: JSON lines (plain, .gz, .zst), Parquet, plain text.

A corpus may be made of groups of files, each read with its own settings (`[corpus.NAME]`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from tqdm import tqdm

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import json_error
from tipqa.core.records import Document
from tipqa.core.settings import Settings, knob, sections, setting
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.base import (
    DocumentParser,
    DuplicateIds,
    Repeats,
    check_duplicate_policy,
)
from tipqa.sources.corpus.paths import expand_rooted
from tipqa.sources.corpus.streams import SUFFIXES, file_format, is_supported, iter_lines

PARQUET_BATCH_ROWS = 1024
BadUtf8 = Literal["replace", "skip"]
FileKind = Literal["auto", "text"]
OWN_GROUP = "corpus"
"""The name of the group of `[corpus]`'s own `paths`."""


@dataclass(frozen=True)
class FileGroupSettings(Settings):
    """[corpus.NAME]: a group of corpus files and how to read them ([corpus]'s keys by default)."""

    paths: tuple[str, ...] = setting((), doc="JSONL(.gz/.zst) and Parquet files, folders or globs")
    format: FileKind = setting(
        "auto", doc="auto: by suffix; text: each file one document, id its path below the folder"
    )
    text_field: str = setting("text", doc="field of the text (dotted names work)")
    id_field: str | None = setting("id", doc="field of the id (empty: file:line)")
    meta_fields: tuple[str, ...] | None = setting(None, doc="fields kept as meta (empty: all)")
    strict: bool = setting(False, doc="a bad record is an error, not a counted skip")
    max_chars: int | None = setting(None, doc="skip longer documents (counted)")
    bad_utf8: BadUtf8 = setting(
        "replace", doc="bytes that are not UTF-8: replace them by U+FFFD (counted) or skip"
    )

    def files(self) -> list[Path]:
        """The files the paths name, sorted (InputError when there are none)."""
        return [path for path, _ in self.rooted_files()]

    def rooted_files(self) -> list[tuple[Path, Path]]:
        """The files with the folder each was named by (see `expand_rooted`)."""
        accept = _visible if self.format == "text" else is_supported
        return expand_rooted(list(self.paths), accept=accept)


def _visible(path: Path) -> bool:
    return not path.name.startswith(".")


@dataclass(frozen=True)
class FileCorpusSettings(FileGroupSettings):
    """[corpus] of local files (`source = files`): its `paths` and/or [corpus.NAME] groups.

    Each `[corpus.NAME]` section is a group of files with reader settings of its own (one
    group of Wikipedia-style `contents`, one of Dolma-style `text`, one of plain-text files);
    the reader keys of `[corpus]` are every group's defaults.
    """

    check_duplicates: bool = knob(True, doc="look for repeated ids (memory grows with the corpus)")
    duplicate_ids: DuplicateIds = setting(
        "keep", doc="a repeated id: keep (indexed as id#2), first (skipped, counted) or refuse"
    )
    groups: tuple[tuple[str, FileGroupSettings], ...] = sections((), doc="[corpus.NAME]")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.paths and not self.groups:
            raise ConfigError(
                "[corpus] source = files needs `paths` (files, folders or globs) or "
                "[corpus.NAME] sections of files"
            )
        check_duplicate_policy(self.check_duplicates, self.duplicate_ids)

    def file_groups(self) -> list[tuple[str, FileGroupSettings]]:
        """The groups of files by name: `[corpus]`'s own paths first, then each section's."""
        own = {name: getattr(self, name) for name in FileGroupSettings.field_names()}
        head = [(OWN_GROUP, FileGroupSettings(**own))] if self.paths else []
        return head + list(self.groups)

    def files(self) -> list[Path]:
        """Every group's files, in group order (InputError when a file is in two groups)."""
        return [path for path, _, _ in _grouped_files(self.file_groups())]


def _grouped_files(
    groups: list[tuple[str, FileGroupSettings]],
) -> list[tuple[Path, Path, int]]:
    """(file, its root, the index of its group) of every group's files."""
    owner: dict[Path, str] = {}
    found = []
    for number, (name, group) in enumerate(groups):
        try:
            rooted = group.rooted_files()
        except InputError as exc:
            section = OWN_GROUP if name == OWN_GROUP else f"corpus.{name}"
            raise InputError(f"[{section}] paths: {exc}") from None
        for path, root in rooted:
            key = path.resolve()
            if key in owner:
                raise InputError(
                    f"the file is in two groups of the corpus: {owner[key]} and {name}",
                    path=str(path),
                )
            owner[key] = name
            found.append((path, root, number))
    return found


@dataclass
class _Group:
    """One group's reader settings and the parser that applies them."""

    settings: FileGroupSettings
    parser: DocumentParser


class FileCorpus:
    """Documents of local files: JSONL (also .json, .gz, .zst), Parquet and plain text.

    `settings.paths` are files, directories or glob patterns (sorted, deterministic). Fields
    may be dotted (`meta.pile_set_name`). Without an id (field absent, null, or
    `id_field=None`) a document's id is "{file name}:{line}" (for Parquet, the row number from
    1). With `format="text"` each file (any suffix) is one document whose id is its path below
    the folder that named it (`wikipedia/Ana.txt` for `evidence/wikipedia/Ana.txt` under
    `paths = evidence`). With `meta_fields=None` every other top-level field goes to
    `Document.meta` (the Pile's `meta` object is kept as is); with a list, only those (dotted)
    fields. Bytes that are not UTF-8 are replaced by U+FFFD (counted as `utf8_replaced`), or
    the record skipped with `bad_utf8="skip"`. Bad records are counted skips in `stats.errors`
    (or InputError when `strict`); damaged compressed files always raise. With groups
    (`[corpus.NAME]`), files are read each with their group's settings, ids checked for
    duplicates across all (a repeated id as `duplicate_ids` says, see `DocumentParser`).
    `stats` is reset at the start of each full pass (`__iter__`). `progress`: a tqdm bar of
    documents (None: only when stderr is a terminal). Library callers build one with
    `FileCorpus.of(paths, **fields)`.
    """

    def __init__(self, settings: FileCorpusSettings, *, progress: bool | None = None) -> None:
        self.settings = settings
        self.progress = progress
        groups = settings.file_groups()
        self._settings = [group for _, group in groups]
        grouped = _grouped_files(groups)
        self.files: list[Path] = [path for path, _, _ in grouped]
        self._place = {path: (root, number) for path, root, number in grouped}
        for path, _, number in grouped:
            if self._settings[number].format == "auto":
                file_format(path)
        self._decided: Repeats | None = None
        self._assigned: Repeats | None = None
        self._start()

    @classmethod
    def of(
        cls,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        progress: bool | None = None,
        **fields: Any,
    ) -> FileCorpus:
        """The corpus of `paths` read with these `FileCorpusSettings` fields (library use)."""
        named = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        if isinstance(fields.get("meta_fields"), list):
            fields["meta_fields"] = tuple(fields["meta_fields"])
        settings = FileCorpusSettings(paths=tuple(str(path) for path in named), **fields)
        return cls(settings, progress=progress)

    def _start(self) -> None:
        """Fresh counters and one parser per group, sharing the ids seen."""
        self.stats = StepStats("corpus")
        seen: set[bytes] = set()
        repeats: Counter[str] = Counter()
        check, policy = self.settings.check_duplicates, self.settings.duplicate_ids
        self._groups = [
            _Group(
                settings,
                DocumentParser(
                    self.stats,
                    settings,
                    check_duplicates=check,
                    duplicate_ids=policy,
                    seen=seen,
                    repeats=repeats,
                    decided=self._decided,
                    assigned=self._assigned,
                ),
            )
            for settings in self._settings
        ]

    def find_repeats(self) -> Repeats:
        """One pass over every file: where a document's id repeats an earlier one's (file,
        line) and the id it takes (None: skipped), for a build that reads its files apart."""
        self._decided, self._assigned = {}, None
        try:
            for _ in self:
                pass
            return self._decided
        finally:
            self._decided = None
            self._start()

    def apply_repeats(self, repeats: Repeats) -> None:
        """Read each file with the ids `find_repeats` found, instead of looking for repeats in
        it alone (a file read apart then gets the ids the whole corpus gives it)."""
        self._assigned = dict(repeats)
        self._start()

    def __iter__(self) -> Iterator[Document]:
        """Yield the documents of every file, starting fresh counters and duplicate checks.

        The progress bar counts bytes on disk against the files' total, so it has an ETA: within
        an uncompressed JSONL or text file as its lines are read, a compressed or Parquet file
        when it is done.
        """
        self._start()
        disable = None if self.progress is None else not self.progress
        sizes = [_size(path) for path in self.files]
        with tqdm(
            total=sum(sizes), desc="corpus", unit="B", unit_scale=True, disable=disable
        ) as bar:
            done = 0
            for path, size in zip(self.files, sizes, strict=True):
                plain = path.suffix.lower() not in PACKED_SUFFIXES
                start = self.stats.counts["bytes_read"]
                for document in self.iter_file(path):
                    if plain:
                        read = min(size, int(self.stats.counts["bytes_read"] - start))
                        bar.update(done + read - bar.n)
                    yield document
                done += size
                bar.update(done - bar.n)
                bar.set_postfix(documents=int(self.stats.counts["documents"]), refresh=False)

    def iter_file(self, path: str | os.PathLike[str]) -> Iterator[Document]:
        """Yield the documents of one file, adding to `stats` (for sharding by file)."""
        path = Path(path)
        root, number = self._place.get(path, (path.parent, 0))
        group = self._groups[number]
        self.stats.add("files")
        before = self.stats.counts["documents"]
        records_before = self.stats.counts["records"]
        missing_before = self.stats.errors["missing_text"]
        if group.settings.format == "text":
            yield from self._text_documents(path, root, group)
        elif file_format(path) == "parquet":
            yield from self._parquet_documents(path, group)
        else:
            yield from self._jsonl_documents(path, group)
        records = self.stats.counts["records"] - records_before
        missing = self.stats.errors["missing_text"] - missing_before
        if records and missing == records and self.stats.counts["documents"] == before:
            raise InputError(
                f"none of the {records} records has the text field (choose text_field)",
                path=str(path),
                field=group.settings.text_field,
            )

    def _decoded(self, raw: bytes, group: _Group, where: str, line: int) -> str | None:
        """`raw` as text: bytes that are not UTF-8 replaced (counted), or None when skipped."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            if group.settings.bad_utf8 == "skip" or group.settings.strict:
                group.parser.skip("invalid_utf8", f"not UTF-8: {err}", path=where, line=line)
                return None
            self.stats.add("utf8_replaced")
            return raw.decode("utf-8", errors="replace")

    def _jsonl_documents(self, path: Path, group: _Group) -> Iterator[Document]:
        """Documents of a JSON-lines file (plain, gzip or zstandard)."""
        name, where = path.name, str(path)
        parser = group.parser
        for number, raw in iter_lines(path):
            self.stats.add("bytes_read", len(raw))
            if not raw.strip():
                self.stats.add("blank_lines")
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                text = self._decoded(raw, group, where, number)
                if text is None:
                    continue
                try:
                    record = orjson.loads(text)
                except orjson.JSONDecodeError as exc:
                    message = json_error(exc, text.encode())
                    parser.skip("invalid_json", message, path=where, line=number)
                    continue
            document = parser.parse(record, origin=name, path=where, line=number)
            if document is not None:
                yield document

    def _text_documents(self, path: Path, root: Path, group: _Group) -> Iterator[Document]:
        """The one document of a plain-text file, its id the file's path below `root`."""
        where = str(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read file: {exc}", path=where) from exc
        self.stats.add("bytes_read", len(raw))
        text = self._decoded(raw, group, where, 1)
        if text is None:
            return
        doc_id = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        record = {group.settings.text_field: text}
        document = group.parser.parse(record, origin=path.name, path=where, line=1, doc_id=doc_id)
        if document is not None:
            yield document

    def _parquet_documents(self, path: Path, group: _Group) -> Iterator[Document]:
        """Documents of a Parquet file, read in record batches of the needed columns."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        where = str(path)
        try:
            parquet = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot open Parquet file: {exc}", path=where) from exc
        columns = _parquet_columns(group.settings, parquet.schema_arrow.names, where)
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
                for row in batch.to_pylist():
                    number += 1
                    document = group.parser.parse(row, origin=path.name, path=where, line=number)
                    if document is not None:
                        yield document
        except (pa.ArrowException, OSError) as exc:
            raise InputError(
                f"corrupt Parquet file after {number} rows: {exc}", path=where
            ) from exc
        finally:
            parquet.close()


PACKED_SUFFIXES = {suffix for suffix, kind in SUFFIXES.items() if kind != "jsonl"}
"""Files whose bytes read are not bytes on disk (compressed, Parquet)."""


def _size(path: Path) -> int:
    """A file's size on disk (0 when it cannot be read: reading it will say why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _parquet_columns(group: FileGroupSettings, names: list[str], where: str) -> list[str] | None:
    """The top-level columns to read (None: all); InputError when the text column is absent."""
    text_column = _top_level(group.text_field, names)
    if text_column is None:
        raise InputError(
            f"the Parquet file has no such column (columns: {', '.join(names)})",
            path=where,
            field=group.text_field,
        )
    if group.meta_fields is None:
        return None
    wanted = [group.text_field, *group.meta_fields]
    if group.id_field:
        wanted.append(group.id_field)
    columns = {c for c in (_top_level(f, names) for f in wanted) if c is not None}
    return [n for n in names if n in columns]


def _top_level(field: str, names: list[str]) -> str | None:
    """The top-level column that holds `field` (itself, or the first part of a dotted name)."""
    if field in names:
        return field
    head = field.split(".", 1)[0]
    return head if head in names else None
