"""The Megatron-LM / GPT-NeoX memory-mapped indexed dataset (`.idx` + `.bin`), read and written.

Implemented from the format's layout, with numpy memmaps and no Megatron dependency. The
`.bin` file is the items' elements back to back. The `.idx` file, all integers little-endian:

| bytes | field |
|---|---|
| 9 | magic `MMIDIDX\\x00\\x00` |
| 8 | version, uint64, 1 |
| 1 | dtype code, uint8 (1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 8 uint16; 6, 7 floats) |
| 8 | item ("sequence") count n, uint64 |
| 8 | document-index length d, uint64 |
| 4 n | sizes: elements per item, int32 |
| 8 n | pointers: byte offset of each item in the `.bin`, int64 |
| 8 d | document index: the item at which each document starts, then n, int64 |

Pythia's preshuffled data is such a pair: 146,432,000 items of 2,049 uint16 tokens each
(pointer i = 4,098 i), one item per training sequence, in training order.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import numpy as np

from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
HEADER = struct.Struct("<9sQBQQ")
DTYPES: dict[int, type[np.generic]] = {
    1: np.uint8,
    2: np.int8,
    3: np.int16,
    4: np.int32,
    5: np.int64,
    8: np.uint16,
}
FLOAT_CODES = {6, 7}


def dataset_paths(prefix: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The `.idx` and `.bin` paths of a dataset prefix (a path ending in either also works)."""
    path = Path(prefix)
    if path.suffix in (".idx", ".bin"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".idx"), path.with_name(path.name + ".bin")


def dtype_code(dtype: np.dtype | type[np.generic]) -> int:
    """The format's code for an integer dtype."""
    wanted = np.dtype(dtype)
    for code, candidate in DTYPES.items():
        if np.dtype(candidate) == wanted:
            return code
    raise ValueError(f"no indexed-dataset code for dtype {wanted}")


@dataclass(frozen=True)
class IndexedDataset:
    """An opened `.idx` (its arrays memory-mapped) and the path of its `.bin`."""

    index_path: Path
    data_path: Path
    dtype: np.dtype
    sizes: np.ndarray
    pointers: np.ndarray
    document_index: np.ndarray

    def __len__(self) -> int:
        return int(self.sizes.shape[0])

    def data(self) -> np.memmap:
        """The whole `.bin` as a flat memmap of elements."""
        return np.memmap(self.data_path, dtype=self.dtype, mode="r")

    def item(self, index: int) -> np.ndarray:
        """The elements of item `index` (a copy)."""
        count = int(self.sizes[index])
        offset = int(self.pointers[index])
        array = np.memmap(self.data_path, dtype=self.dtype, mode="r", offset=offset, shape=(count,))
        return np.array(array)


def read_index(prefix: str | os.PathLike[str]) -> IndexedDataset:
    """Open an indexed dataset; InputError naming the file and field when the layout is off."""
    index_path, data_path = dataset_paths(prefix)
    where = str(index_path)
    if not index_path.is_file():
        raise InputError("no such index file", path=where)
    if not data_path.is_file():
        raise InputError("no such data file next to the index", path=str(data_path))
    file_size = index_path.stat().st_size
    with open(index_path, "rb") as handle:
        head = handle.read(HEADER.size)
    if len(head) < HEADER.size:
        raise InputError(f"index shorter than its {HEADER.size}-byte header", path=where)
    magic, version, code, count, doc_count = HEADER.unpack(head)
    if magic != MAGIC:
        raise InputError(f"not an MMIDIDX index (magic {magic!r})", path=where, field="magic")
    if version != VERSION:
        raise InputError(f"version {version}, expected {VERSION}", path=where, field="version")
    if code in FLOAT_CODES or code not in DTYPES:
        kind = "a float dtype, not tokens" if code in FLOAT_CODES else "unknown"
        raise InputError(f"dtype code {code}: {kind}", path=where, field="dtype")
    expected = HEADER.size + 12 * count + 8 * doc_count
    if file_size != expected:
        raise InputError(
            f"{file_size} bytes, but {count} sizes and pointers and {doc_count} document-index "
            f"entries need {expected}",
            path=where,
            field="sizes",
        )
    offset = HEADER.size
    sizes = np.memmap(index_path, dtype="<i4", mode="r", offset=offset, shape=(count,))
    offset += 4 * count
    pointers = np.memmap(index_path, dtype="<i8", mode="r", offset=offset, shape=(count,))
    offset += 8 * count
    documents = np.memmap(index_path, dtype="<i8", mode="r", offset=offset, shape=(doc_count,))
    dtype = np.dtype(DTYPES[code])
    if count:
        end = int(pointers[-1]) + int(sizes[-1]) * dtype.itemsize
        if data_path.stat().st_size < end:
            raise InputError(
                f"data file has {data_path.stat().st_size} bytes, the index points to {end}",
                path=str(data_path),
            )
    return IndexedDataset(index_path, data_path, dtype, sizes, pointers, documents)


def check_fixed_sequences(dataset: IndexedDataset, seq_length: int) -> None:
    """Every item is one `seq_length` sequence, stored back to back from byte 0 (else error)."""
    where = str(dataset.index_path)
    wrong = np.flatnonzero(dataset.sizes != seq_length)
    if wrong.size:
        first = int(wrong[0])
        raise InputError(
            f"item {first} has {int(dataset.sizes[first])} tokens, expected seq_length "
            f"{seq_length} ({wrong.size} items differ): not a fixed-length training stream",
            path=where,
            field="sizes",
        )
    step = seq_length * dataset.dtype.itemsize
    expected = np.arange(len(dataset), dtype=np.int64) * step
    off = np.flatnonzero(np.asarray(dataset.pointers) != expected)
    if off.size:
        first = int(off[0])
        raise InputError(
            f"item {first} starts at byte {int(dataset.pointers[first])}, expected "
            f"{first * step}: items are not stored back to back",
            path=where,
            field="pointers",
        )


class IndexedDatasetWriter:
    """Writes an indexed dataset item by item: `.bin` streamed, `.idx` on close, atomically."""

    def __init__(self, prefix: str | os.PathLike[str], dtype: type[np.generic] = np.uint16) -> None:
        self.index_path, self.data_path = dataset_paths(prefix)
        self.dtype = np.dtype(dtype)
        self.code = dtype_code(self.dtype)
        self.sizes: list[int] = []
        self.document_index: list[int] = [0]
        self._data = atomic_open(self.data_path)
        self._handle = self._data.__enter__()

    def add(self, item: np.ndarray | Iterable[int]) -> None:
        """Append one item (a sequence of token ids)."""
        array = np.asarray(item)
        if array.ndim != 1:
            raise ValueError("an item is a one-dimensional array")
        limits = np.iinfo(self.dtype)
        if array.size and (array.min() < limits.min or array.max() > limits.max):
            raise ValueError(f"token ids out of range for {self.dtype}")
        self._handle.write(array.astype(self.dtype).tobytes())
        self.sizes.append(int(array.size))

    def add_sequences(self, block: np.ndarray, *, documents: bool = True) -> None:
        """Append each row of a 2-D array as an item (and as a document, by default)."""
        limits = np.iinfo(self.dtype)
        if block.size and (block.min() < limits.min or block.max() > limits.max):
            raise ValueError(f"token ids out of range for {self.dtype}")
        self._handle.write(np.ascontiguousarray(block, dtype=self.dtype).tobytes())
        first = len(self.sizes)
        self.sizes.extend([block.shape[1]] * block.shape[0])
        if documents:
            self.document_index.extend(range(first + 1, len(self.sizes) + 1))

    def end_document(self) -> None:
        """Mark that the next item starts a new document."""
        self.document_index.append(len(self.sizes))

    def close(self) -> None:
        """Finish the `.bin` and write the `.idx`."""
        self._data.__exit__(None, None, None)
        sizes = np.asarray(self.sizes, dtype="<i4")
        pointers = np.zeros(len(sizes), dtype="<i8")
        if len(sizes):
            pointers[1:] = np.cumsum(sizes[:-1].astype(np.int64)) * self.dtype.itemsize
        documents = self.document_index
        if documents[-1] != len(sizes):
            documents = [*documents, len(sizes)]
        with atomic_open(self.index_path) as out:
            out.write(HEADER.pack(MAGIC, VERSION, self.code, len(sizes), len(documents)))
            out.write(sizes.tobytes())
            out.write(pointers.tobytes())
            out.write(np.asarray(documents, dtype="<i8").tobytes())

    def __enter__(self) -> IndexedDatasetWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self._data.__exit__(kind, value, traceback)
