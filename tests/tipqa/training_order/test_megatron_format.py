"""The indexed-dataset reader and writer against the format's documented byte layout."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tipqa.core.errors import InputError
from tipqa.training_order.megatron_format import (
    IndexedDatasetWriter,
    check_fixed_sequences,
    dataset_paths,
    read_index,
)


def write_items(prefix: Path, items: list[list[int]], *, dtype: type = np.uint16) -> None:
    with IndexedDatasetWriter(prefix, dtype=dtype) as writer:
        for item in items:
            writer.add(item)
            writer.end_document()


def test_written_index_has_the_documented_layout(tmp_path: Path) -> None:
    items = [[5, 6, 7], [8], [9, 10]]
    write_items(tmp_path / "data", items)
    raw = (tmp_path / "data.idx").read_bytes()
    assert raw[:9] == b"MMIDIDX\x00\x00"
    version, code, count, documents = struct.unpack("<QBQQ", raw[9:34])
    assert (version, code, count, documents) == (1, 8, 3, 4)
    sizes = struct.unpack("<3i", raw[34:46])
    pointers = struct.unpack("<3q", raw[46:70])
    doc_index = struct.unpack("<4q", raw[70:102])
    assert len(raw) == 102
    assert sizes == (3, 1, 2)
    assert pointers == (0, 6, 8)
    assert doc_index == (0, 1, 2, 3)
    data = np.frombuffer((tmp_path / "data.bin").read_bytes(), dtype="<u2")
    assert data.tolist() == [5, 6, 7, 8, 9, 10]


def test_reader_round_trip_and_dtypes(tmp_path: Path) -> None:
    items = [[1, 2, 3, 4], [70_000, 2]]
    write_items(tmp_path / "wide", items, dtype=np.int32)
    dataset = read_index(tmp_path / "wide.idx")
    assert dataset.dtype == np.int32 and len(dataset) == 2
    assert [dataset.item(i).tolist() for i in range(2)] == items
    assert dataset.pointers.tolist() == [0, 16]
    assert dataset.document_index.tolist() == [0, 1, 2]
    assert dataset_paths(tmp_path / "wide.bin") == dataset_paths(tmp_path / "wide")


def test_document_index_groups_items(tmp_path: Path) -> None:
    with IndexedDatasetWriter(tmp_path / "docs") as writer:
        writer.add([1, 2])
        writer.add([3])
        writer.end_document()
        writer.add([4])
    assert read_index(tmp_path / "docs").document_index.tolist() == [0, 2, 3]


def test_fixed_sequences_accepted_and_rejected(tmp_path: Path) -> None:
    block = np.arange(12, dtype=np.uint16).reshape(3, 4)
    with IndexedDatasetWriter(tmp_path / "fixed") as writer:
        writer.add_sequences(block)
    dataset = read_index(tmp_path / "fixed")
    check_fixed_sequences(dataset, 4)
    assert dataset.data().reshape(3, 4).tolist() == block.tolist()
    with pytest.raises(InputError, match="item 0 has 4 tokens, expected seq_length 5"):
        check_fixed_sequences(dataset, 5)
    write_items(tmp_path / "ragged", [[1, 2], [3, 4], [5]])
    with pytest.raises(InputError, match="item 2 has 1 tokens") as info:
        check_fixed_sequences(read_index(tmp_path / "ragged"), 2)
    assert info.value.field == "sizes"


def _patched(tmp_path: Path, offset: int, data: bytes) -> Path:
    write_items(tmp_path / "x", [[1, 2], [3, 4]])
    raw = bytearray((tmp_path / "x.idx").read_bytes())
    raw[offset : offset + len(data)] = data
    (tmp_path / "x.idx").write_bytes(bytes(raw))
    return tmp_path / "x"


@pytest.mark.parametrize(
    ("offset", "data", "field", "message"),
    [
        (0, b"TNTIDX\x00\x00\x00", "magic", "not an MMIDIDX index"),
        (9, struct.pack("<Q", 2), "version", "version 2, expected 1"),
        (17, struct.pack("<B", 6), "dtype", "dtype code 6: a float dtype"),
        (17, struct.pack("<B", 9), "dtype", "dtype code 9: unknown"),
        (18, struct.pack("<Q", 5), "sizes", "5 sizes and pointers"),
    ],
)
def test_bad_index_headers_name_the_field(
    tmp_path: Path, offset: int, data: bytes, field: str, message: str
) -> None:
    prefix = _patched(tmp_path, offset, data)
    with pytest.raises(InputError, match=message) as info:
        read_index(prefix)
    assert info.value.field == field
    assert str(prefix) + ".idx" in str(info.value)


def test_pointers_must_be_back_to_back(tmp_path: Path) -> None:
    prefix = _patched(tmp_path, 34 + 8 + 8, struct.pack("<q", 2))
    with pytest.raises(InputError, match="item 1 starts at byte 2, expected 4") as info:
        check_fixed_sequences(read_index(prefix), 2)
    assert info.value.field == "pointers"


def test_short_data_file_and_missing_files(tmp_path: Path) -> None:
    write_items(tmp_path / "x", [[1, 2], [3, 4]])
    (tmp_path / "x.bin").write_bytes(b"\x00" * 6)
    with pytest.raises(InputError, match="data file has 6 bytes, the index points to 8"):
        read_index(tmp_path / "x")
    with pytest.raises(InputError, match="no such index file"):
        read_index(tmp_path / "absent")
    (tmp_path / "x.bin").unlink()
    with pytest.raises(InputError, match="no such data file"):
        read_index(tmp_path / "x")


def test_writer_rejects_out_of_range_tokens_and_leaves_nothing(tmp_path: Path) -> None:
    with (
        pytest.raises(ValueError, match="out of range"),
        IndexedDatasetWriter(tmp_path / "bad") as writer,
    ):
        writer.add([1, 70_000])
    assert list(tmp_path.iterdir()) == []
