"""Tests of the line readers of plain and compressed files."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
import zstandard

from tipqa.core.errors import InputError
from tipqa.sources.corpus.streams import StreamError, ZstdReader, file_format, iter_lines

TEXT = b"".join(b"line %d\n" % i for i in range(20000))


def test_zstd_reader_reads_all_frames_in_small_pieces() -> None:
    compressor = zstandard.ZstdCompressor()
    data = compressor.compress(TEXT[:70000]) + compressor.compress(TEXT[70000:])
    reader = io.BufferedReader(ZstdReader(io.BytesIO(data)), buffer_size=4096)
    assert reader.read() == TEXT


def test_zstd_reader_raises_on_a_cut_frame() -> None:
    data = zstandard.ZstdCompressor().compress(TEXT)
    reader = ZstdReader(io.BytesIO(data[:-5]))
    with pytest.raises(StreamError, match="ended inside a frame"):
        io.BufferedReader(reader).read()


def test_empty_zstd_file_has_no_lines(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl.zst"
    path.write_bytes(b"")
    assert list(iter_lines(path)) == []


def test_lines_are_numbered_from_one_and_keep_a_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(b"one\n\nthree"))
    assert list(iter_lines(path)) == [(1, b"one\n"), (2, b"\n"), (3, b"three")]


def test_not_gzip_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl.gz"
    path.write_bytes(b'{"text": "not compressed"}\n')
    with pytest.raises(InputError, match=r"plain\.jsonl\.gz.*corrupt gzip file after 0"):
        list(iter_lines(path))


def test_file_format_by_last_suffix() -> None:
    assert file_format(Path("x.json.gz")) == "gzip"
    assert file_format(Path("x.JSONL")) == "jsonl"
    assert file_format(Path("x.jsonl.zstd")) == "zstd"
    with pytest.raises(InputError, match="unsupported file type"):
        file_format(Path("x.tar"))
    with pytest.raises(InputError, match="no lines"):
        list(iter_lines(Path("x.parquet")))
