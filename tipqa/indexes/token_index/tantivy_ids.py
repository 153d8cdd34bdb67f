"""Document ids by row, beside the tantivy index: ids of hits without reading stored text.

Each hit's `row` (a fast field) indexes `doc-ids.offsets` (int64, one more than the rows) into
`doc-ids.bin` (the ids' UTF-8 bytes, in row order). tantivy could sort hits by a string fast
field, but that costs milliseconds a query, and its stored documents hold the whole text.
Parts write their ids in stream order with their ledger; `write_table` puts them in row order.
"""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np

IDS = "doc-ids.bin"
OFFSETS = "doc-ids.offsets"


def write_table(folder: Path, rows: np.ndarray, lengths: np.ndarray, blob: bytes) -> None:
    """Write the table of ids whose rows, UTF-8 lengths and bytes (in `blob` order) are given."""
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(lengths) else lengths
    order = np.argsort(rows, kind="stable")
    if len(order) and not np.array_equal(rows[order], np.arange(len(rows))):
        raise ValueError("rows must be 0 .. n-1, each once")
    ordered = lengths[order]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(ordered, out=offsets[1:])
    shift = np.repeat(starts[order] - offsets[:-1], ordered)
    data = np.frombuffer(blob, dtype=np.uint8)[np.arange(int(offsets[-1])) + shift]
    data.tofile(folder / IDS)
    offsets.tofile(folder / OFFSETS)


class IdTable:
    """The ids of an index's rows (memory-mapped)."""

    def __init__(self, folder: Path) -> None:
        self.offsets = np.fromfile(folder / OFFSETS, dtype=np.int64)
        with open(folder / IDS, "rb") as handle:
            self.data = (
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if self.offsets[-1] else b""
            )

    def ids(self, rows: list[int]) -> list[str]:
        """The ids at these rows."""
        offsets, data = self.offsets, self.data
        return [data[offsets[r] : offsets[r + 1]].decode() for r in rows]
