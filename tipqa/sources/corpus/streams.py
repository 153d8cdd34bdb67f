"""Streaming line readers for plain, gzip and zstandard files that never truncate silently.

`python-zstandard`'s `stream_reader` returns a clean end of file when a frame is cut short, so
zstandard input goes through `ZstdReader`, which checks that the last frame was complete. A
truncated or corrupt compressed file raises an `InputError` naming the file and the number of
lines read before the damage.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from tipqa.core.errors import InputError

FileFormat = Literal["jsonl", "gzip", "zstd", "parquet"]

SUFFIXES: dict[str, FileFormat] = {
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
    ".gz": "gzip",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".parquet": "parquet",
}
BUFFER_SIZE = 1 << 20
CHUNK_SIZE = 1 << 16


class StreamError(Exception):
    """A zstandard stream ended inside a frame or could not be decoded."""


def file_format(path: Path) -> FileFormat:
    """The format of `path` from its last suffix; InputError when it is not supported."""
    try:
        return SUFFIXES[path.suffix.lower()]
    except KeyError:
        known = ", ".join(sorted(SUFFIXES))
        raise InputError(
            f"unsupported file type; known suffixes: {known}", path=str(path)
        ) from None


def is_supported(path: Path) -> bool:
    """True when `path` has a suffix that a reader handles."""
    return path.suffix.lower() in SUFFIXES


class ZstdReader(io.RawIOBase):
    """A raw reader over zstandard frames (one or many) that raises on a cut-short frame.

    Closing the reader closes `handle`.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        import zstandard

        super().__init__()
        self._handle = handle
        self._dctx = zstandard.ZstdDecompressor()
        self._error = zstandard.ZstdError
        self._obj: Any = None
        self._buffer = b""
        self._pos = 0
        self._done = False

    def readable(self) -> bool:
        """Always readable."""
        return True

    def close(self) -> None:
        """Close the reader and the underlying handle."""
        if not self.closed:
            self._handle.close()
        super().close()

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        """Fill `buffer` with decompressed bytes; 0 at the end of the last complete frame."""
        while self._pos >= len(self._buffer) and not self._done:
            self._fill()
        n = min(len(buffer), len(self._buffer) - self._pos)
        buffer[:n] = memoryview(self._buffer)[self._pos : self._pos + n]
        self._pos += n
        return n

    def _fill(self) -> None:
        """Decompress the next chunk of input into the internal buffer."""
        data = self._handle.read(CHUNK_SIZE)
        if not data:
            if self._obj is not None and not self._obj.eof:
                raise StreamError("zstandard stream ended inside a frame")
            self._done = True
            return
        output = []
        while data:
            if self._obj is None or self._obj.eof:
                self._obj = self._dctx.decompressobj()
            try:
                output.append(self._obj.decompress(data))
            except self._error as exc:
                raise StreamError(str(exc)) from exc
            data = self._obj.unused_data if self._obj.eof else b""
        self._buffer = b"".join(output)
        self._pos = 0


def _open(path: Path, fmt: FileFormat) -> IO[bytes]:
    """A buffered binary reader of the decompressed content of `path`."""
    if fmt == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if fmt == "zstd":
        raw = open(path, "rb")  # noqa: SIM115 - closed through the reader
        return io.BufferedReader(ZstdReader(raw), buffer_size=BUFFER_SIZE)
    return open(path, "rb", buffering=BUFFER_SIZE)


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """Yield (line number from 1, raw bytes) of a plain, gzip or zstandard text file.

    Raises InputError naming the file and the lines read when a compressed file is
    truncated or corrupt.
    """
    path = Path(path)
    fmt = file_format(path)
    if fmt == "parquet":
        raise InputError("a Parquet file has no lines", path=str(path))
    number = 0
    try:
        with _open(path, fmt) as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line
    except (EOFError, StreamError, gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(
            f"truncated or corrupt {fmt} file after {number} complete lines: {exc}",
            path=str(path),
        ) from exc
    except OSError as exc:
        raise InputError(f"cannot read file after {number} lines: {exc}", path=str(path)) from exc
