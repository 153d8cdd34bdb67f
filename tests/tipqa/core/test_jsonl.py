"""JSONL records: atomic writes, and read errors that name the file and the line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tipqa.core.errors import InputError
from tipqa.core.jsonl import (
    atomic_open,
    iter_records,
    json_error,
    read_json,
    read_records,
    write_json,
    write_records,
)
from tipqa.core.records import Keywords, TokenCandidates, TokenHit


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_write_and_read_round_trip(tmp_path: Path) -> None:
    records = [
        TokenCandidates("q1", ["K"], 2, [TokenHit("d1", 2.0), TokenHit("d2", 1.0)]),
        TokenCandidates("q2", [], 0, []),
    ]
    path = tmp_path / "sub" / "c.jsonl"
    assert write_records(path, records) == 2
    assert read_records(path, TokenCandidates) == records
    assert path.read_bytes().count(b"\n") == 2
    assert _leftovers(path.parent) == []


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "k.jsonl"
    write_records(path, [Keywords("q1", ["old"])])
    before = path.read_bytes()

    def broken():
        yield Keywords("q2", ["new"])
        raise RuntimeError("stage crashed")

    with pytest.raises(RuntimeError, match="stage crashed"):
        write_records(path, broken())
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_atomic_open_exception_inside_writer(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), atomic_open(path) as out:
        out.write(b"partial")
        raise KeyboardInterrupt
    assert path.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_atomic_open_new_file_absent_after_failure(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    with pytest.raises(ValueError), atomic_open(path) as out:
        out.write(b"x")
        raise ValueError
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "k.jsonl"
    path.write_bytes(
        b'\n{"question_id": "a", "keywords": []}\n  \n\n{"question_id": "b", "keywords": ["x"]}\n'
    )
    assert [k.question_id for k in read_records(path, Keywords)] == ["a", "b"]


def test_bad_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "k.jsonl"
    path.write_bytes(b'{"question_id": "a", "keywords": []}\n\n{"question_id": \n')
    with pytest.raises(InputError) as info:
        read_records(path, Keywords)
    assert info.value.path == str(path)
    assert info.value.line == 3
    assert str(path) in str(info.value) and "line 3" in str(info.value)
    assert "invalid JSON" in str(info.value)


def test_missing_field_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "k.jsonl"
    path.write_bytes(b'{"question_id": "a", "keywords": []}\n{"question_id": "b"}\n')
    with pytest.raises(InputError) as info:
        read_records(path, Keywords)
    assert info.value.line == 2
    assert "'keywords'" in str(info.value)


def test_iter_records_yields_good_lines_before_the_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "k.jsonl"
    path.write_bytes(b'{"question_id": "a", "keywords": []}\n[1]\n')
    stream = iter_records(path, Keywords)
    assert next(stream).question_id == "a"
    with pytest.raises(InputError, match="line 2"):
        next(stream)


def test_json_round_trip_and_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_json(path, {"b": 1, "a": [1, 2]})
    assert read_json(path) == {"a": [1, 2], "b": 1}
    assert path.read_text().index('"a"') < path.read_text().index('"b"')
    path.write_text("{nope")
    with pytest.raises(InputError, match=str(path)):
        read_json(path)


def test_a_bad_json_line_is_described_with_its_column_and_bad_bytes_by_their_offset() -> None:
    try:
        orjson.loads(b'{"a": "cut')
    except orjson.JSONDecodeError as exc:
        described = json_error(exc, b'{"a": "cut')
    assert described.startswith("invalid JSON at column ") and "line 1" not in described
    raw = b'{"a": "caf\xe9"}'
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        described = json_error(exc, raw)
    assert described == "not UTF-8 at byte 11 (0xe9): save the file as UTF-8"
