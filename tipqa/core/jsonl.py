"""JSONL reading and atomic writing of records (orjson)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TypeVar

import orjson

from tipqa.core.errors import InputError
from tipqa.core.records import Record, RecordError
from tipqa.core.scratch import scratch_file

R = TypeVar("R", bound=Record)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO]:
    """Open a temporary file next to `path` and move it into place only on success.

    The file gets the mode the umask gives (`tipqa.core.scratch`), like any file `open` makes.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = scratch_file(path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_records(path: str | os.PathLike[str], records: Iterable[Record]) -> int:
    """Write records as JSONL atomically; return how many were written."""
    count = 0
    with atomic_open(path) as out:
        for record in records:
            out.write(orjson.dumps(record.to_dict()))
            out.write(b"\n")
            count += 1
    return count


def write_json(path: str | os.PathLike[str], data: object) -> None:
    """Write one JSON document atomically (indented, keys sorted; a `Step` key as its name)."""
    options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
    with atomic_open(path) as out:
        out.write(orjson.dumps(data, option=options))
        out.write(b"\n")


def read_json(path: str | os.PathLike[str]) -> object:
    """Read one JSON document, naming the file when it is invalid."""
    try:
        return orjson.loads(Path(path).read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", path=str(path)) from exc


def json_error(exc: orjson.JSONDecodeError, raw: bytes) -> str:
    """What is wrong with one line that is not JSON, without a line number of its own (the
    caller names the file's): the column, or the offset of bytes that are not UTF-8."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        byte = raw[bad.start]
        return f"not UTF-8 at byte {bad.start + 1} (0x{byte:02x}): save the file as UTF-8"
    return f"invalid JSON at column {exc.colno}: {exc.msg}"


def read_records(path: str | os.PathLike[str], cls: type[R]) -> list[R]:
    """Read every record of a JSONL file written by `write_records`."""
    return list(iter_records(path, cls))


def iter_json_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, object]]:
    """(line number, value) of every non-blank line; invalid JSON raises naming the line.

    Read with the standard library, which takes NaN and Infinity: files people write by hand
    or from numpy have them, and their readers say what is wrong with such a value.
    """
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg}", path=str(path), line=number) from exc


def iter_records(path: str | os.PathLike[str], cls: type[R]) -> Iterator[R]:
    """Stream the records of a JSONL file; a bad line raises an error naming file and line."""
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield cls.from_dict(orjson.loads(line))
            except orjson.JSONDecodeError as exc:
                raise InputError(json_error(exc, line), path=str(path), line=number) from exc
            except RecordError as exc:
                raise InputError(str(exc), path=str(path), line=number) from exc
