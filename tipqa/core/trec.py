"""TREC text files (qrels, runs): one record a line, its fields separated by white space."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError


def trec_lines(path: Path, kind: str, fields: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank line of the TREC `kind` file at `path` (say,
    "qrels"); an InputError for a missing file or a line without exactly `fields`."""
    if not Path(path).is_file():
        raise InputError(f"no {kind} file here", path=str(path))
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            found = line.split()
            if not found:
                continue
            if len(found) != len(fields):
                shape = f"{len(fields)} fields ({' '.join(fields)})"
                raise InputError(
                    f"a {kind} line has {shape}, got {len(found)}",
                    path=str(path),
                    line=number,
                )
            yield number, found


def trec_number(value: str, kind: type, name: str, path: Path, line: int, noun: str) -> Any:
    """`value` of field `name` as `kind` (int or float); an InputError naming file, line and
    field, saying the value is not `noun` ("a number", "an integer"), otherwise."""
    try:
        return kind(value)
    except ValueError:
        raise InputError(
            f"{name} {value!r} is not {noun}", path=str(path), line=line, field=name
        ) from None
