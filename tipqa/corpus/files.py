"""Corpus reader for local JSON-lines (plain, .gz, .zst) and Parquet files, streamed."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from tqdm import tqdm

from tipqa.corpus.base import DocumentParser
from tipqa.corpus.paths import expand_paths
from tipqa.corpus.streams import file_format, is_supported, iter_lines
from tipqa.errors import ConfigError, InputError
from tipqa.records import Document
from tipqa.settings import Settings, knob, setting
from tipqa.stats import StageStats

PARQUET_BATCH_ROWS = 1024


@dataclass(frozen=True)
class FileCorpusSettings(Settings):
    """[corpus] of local files (`source = files`); see `FileCorpus`."""

    paths: tuple[str, ...] = setting((), doc="JSONL(.gz/.zst) and Parquet files, folders or globs")
    text_field: str = setting("text", doc="field of the text (dotted names work)")
    id_field: str | None = setting("id", doc="field of the id (empty: file:line)")
    meta_fields: tuple[str, ...] | None = setting(None, doc="fields kept as meta (empty: all)")
    strict: bool = setting(False, doc="a bad record is an error, not a counted skip")
    max_chars: int | None = setting(None, doc="skip longer documents (counted)")
    check_duplicates: bool = knob(True, doc="count repeated ids (memory grows with the corpus)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.paths:
            raise ConfigError("[corpus] source = files needs `paths` (files, folders or globs)")

    def files(self) -> list[Path]:
        """The corpus files the paths name, sorted (InputError when there are none)."""
        return expand_paths(list(self.paths), accept=is_supported)


def open_files(settings: FileCorpusSettings, *, progress: bool | None = None) -> FileCorpus:
    """The corpus of these settings."""
    return FileCorpus(
        list(settings.paths),
        text_field=settings.text_field,
        id_field=settings.id_field,
        meta_fields=None if settings.meta_fields is None else list(settings.meta_fields),
        strict=settings.strict,
        max_chars=settings.max_chars,
        check_duplicates=settings.check_duplicates,
        progress=progress,
    )


class FileCorpus:
    """Documents of local files: JSONL (also .json, .gz, .zst) and Parquet, in file order.

    `paths` are files, directories or glob patterns (sorted, deterministic). Fields may be
    dotted (`meta.pile_set_name`). Without an id (field absent, null, or `id_field=None`) a
    document's id is "{file name}:{line}" (for Parquet, the row number from 1). With
    `meta_fields=None` every other top-level field goes to `Document.meta` (the Pile's `meta`
    object is kept as is); with a list, only those (dotted) fields. Bad records are counted
    skips in `stats.errors` (or InputError when `strict`); damaged compressed files always
    raise. `stats` is reset at the start of each full pass (`__iter__`). `progress`: a tqdm
    bar of documents (None: only when stderr is a terminal).
    """

    def __init__(
        self,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        text_field: str = "text",
        id_field: str | None = "id",
        meta_fields: list[str] | None = None,
        strict: bool = False,
        max_chars: int | None = None,
        check_duplicates: bool = True,
        progress: bool | None = None,
    ) -> None:
        self.files: list[Path] = expand_paths(paths, accept=is_supported)
        for path in self.files:
            file_format(path)
        self.text_field = text_field
        self.id_field = id_field
        self.meta_fields = meta_fields
        self.strict = strict
        self.progress = progress
        self.stats = StageStats("corpus")
        self._parser_options: dict[str, Any] = {
            "text_field": text_field,
            "id_field": id_field,
            "meta_fields": meta_fields,
            "strict": strict,
            "max_chars": max_chars,
            "check_duplicates": check_duplicates,
        }
        self._parser = DocumentParser(self.stats, **self._parser_options)

    def __iter__(self) -> Iterator[Document]:
        """Yield the documents of every file, starting fresh counters and duplicate checks."""
        self.stats = StageStats("corpus")
        self._parser = DocumentParser(self.stats, **self._parser_options)
        disable = None if self.progress is None else not self.progress
        with tqdm(desc="corpus", unit="doc", disable=disable) as bar:
            for path in self.files:
                for document in self.iter_file(path):
                    bar.update()
                    yield document

    def iter_file(self, path: str | os.PathLike[str]) -> Iterator[Document]:
        """Yield the documents of one file, adding to `stats` (for sharding by file)."""
        path = Path(path)
        self.stats.add("files")
        before = self.stats.counts["documents"]
        records_before = self.stats.counts["records"]
        missing_before = self.stats.errors["missing_text"]
        if file_format(path) == "parquet":
            yield from self._parquet_documents(path)
        else:
            yield from self._jsonl_documents(path)
        records = self.stats.counts["records"] - records_before
        missing = self.stats.errors["missing_text"] - missing_before
        if records and missing == records and self.stats.counts["documents"] == before:
            raise InputError(
                f"none of the {records} records has the text field (choose text_field)",
                path=str(path),
                field=self.text_field,
            )

    def _jsonl_documents(self, path: Path) -> Iterator[Document]:
        """Documents of a JSON-lines file (plain, gzip or zstandard)."""
        name, where = path.name, str(path)
        parser = self._parser
        for number, raw in iter_lines(path):
            self.stats.add("bytes_read", len(raw))
            if not raw.strip():
                self.stats.add("blank_lines")
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    parser.skip("invalid_utf8", f"not UTF-8: {err}", path=where, line=number)
                else:
                    parser.skip("invalid_json", f"invalid JSON: {exc}", path=where, line=number)
                continue
            document = parser.parse(record, origin=name, path=where, line=number)
            if document is not None:
                yield document

    def _parquet_documents(self, path: Path) -> Iterator[Document]:
        """Documents of a Parquet file, read in record batches of the needed columns."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        where = str(path)
        try:
            parquet = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot open Parquet file: {exc}", path=where) from exc
        columns = self._parquet_columns(parquet.schema_arrow.names, where)
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
                for row in batch.to_pylist():
                    number += 1
                    document = self._parser.parse(row, origin=path.name, path=where, line=number)
                    if document is not None:
                        yield document
        except (pa.ArrowException, OSError) as exc:
            raise InputError(
                f"corrupt Parquet file after {number} rows: {exc}", path=where
            ) from exc
        finally:
            parquet.close()

    def _parquet_columns(self, names: list[str], where: str) -> list[str] | None:
        """The top-level columns to read (None: all); InputError when the text column is absent."""
        text_column = _top_level(self.text_field, names)
        if text_column is None:
            raise InputError(
                f"the Parquet file has no such column (columns: {', '.join(names)})",
                path=where,
                field=self.text_field,
            )
        if self.meta_fields is None:
            return None
        wanted = [self.text_field, *self.meta_fields]
        if self.id_field:
            wanted.append(self.id_field)
        columns = {c for c in (_top_level(f, names) for f in wanted) if c is not None}
        return [n for n in names if n in columns]


def _top_level(field: str, names: list[str]) -> str | None:
    """The top-level column that holds `field` (itself, or the first part of a dotted name)."""
    if field in names:
        return field
    head = field.split(".", 1)[0]
    return head if head in names else None
