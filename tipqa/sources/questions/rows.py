"""Reading question files row by row: JSON lines (plain, .gz, .zst), Parquet, CSV or TSV."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import InputError
from tipqa.core.jsonl import json_error
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.streams import file_format, is_supported, iter_lines

DELIMITED = {".csv": ",", ".tsv": "\t"}


def is_row_file(path: Path) -> bool:
    """True for a file `iter_rows` reads (JSON lines, Parquet, CSV, TSV)."""
    return is_supported(path) or path.suffix.lower() in DELIMITED


def iter_rows(
    path: Path, columns: list[str] | None = None, *, stats: StepStats | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line or row number from 1, object) of a question file.

    For Parquet, only the `columns` that the file has are read (all when None).
    Blank lines are passed over, counted in `stats` (`blank_lines`); anything else that is not
    a JSON object is an InputError naming the file and line (a question file is small and
    must be read whole).
    """
    where = str(path)
    if path.suffix.lower() in DELIMITED:
        yield from _delimited_rows(path, DELIMITED[path.suffix.lower()])
        return
    if file_format(path) == "parquet":
        yield from _parquet_rows(path, columns)
        return
    for number, raw in iter_lines(path):
        if not raw.strip():
            if stats is not None:
                stats.add("blank_lines")
            continue
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(json_error(exc, raw), path=where, line=number) from exc
        if not isinstance(row, dict):
            message = f"expected a JSON object, got {type(row).__name__}"
            raise InputError(message, path=where, line=number)
        yield number, row


def _parquet_rows(path: Path, columns: list[str] | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a Parquet file as dicts (nested structs become dicts), batch by batch."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    number = 0
    try:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        wanted = None if columns is None else [c for c in names if c.split(".")[0] in columns]
        for batch in parquet.iter_batches(columns=wanted):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (pa.ArrowException, OSError) as exc:
        message = f"cannot read Parquet file after {number} rows: {exc}"
        raise InputError(message, path=str(path)) from exc


def _delimited_rows(path: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV / TSV file with a header line, numbered by their line in the file."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            header = reader.fieldnames or []
            for row in reader:
                if None in row:
                    message = f"{len(header) + len(row[None])} fields, the header has {len(header)}"
                    raise InputError(message, path=str(path), line=reader.line_num)
                yield reader.line_num, row
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc}", path=str(path)) from exc
    except csv.Error as exc:
        raise InputError(f"bad CSV: {exc}", path=str(path)) from exc
