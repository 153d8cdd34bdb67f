"""Training token streams: fixed-length sequences in training order, each with its batch.

Two layouts of the same stream:

* `MegatronStream`: an indexed dataset (`.idx` + `.bin`) whose items are the training
  sequences in order (Pythia's preshuffled data); sequence i is in batch i // batch_size.
* `ParquetStream`: Parquet files with one row per sequence, a list column of token ids and a
  column with its batch index (files in name order, rows in file order).

Both are cut into `StreamUnit`s (ranges of global sequence numbers) that a worker reads on its
own, so a stream object holds only paths and numbers and can be sent to worker processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tipqa.core.errors import InputError
from tipqa.sources.corpus.paths import expand_paths
from tipqa.training_order.megatron_format import check_fixed_sequences, read_index


@dataclass(frozen=True)
class StreamUnit:
    """Sequences [first, stop) of a stream: the piece of work one worker does at a time."""

    first: int
    stop: int
    file: int = 0
    row_group: int = -1

    @property
    def name(self) -> str:
        """A stable name for the unit's result file."""
        return f"{self.first:012d}-{self.stop:012d}"


@dataclass(frozen=True)
class Block:
    """Consecutive sequences of a unit: tokens (n, seq_length) and each one's batch."""

    first: int
    tokens: np.ndarray
    batches: np.ndarray


class TokenStream(Protocol):
    """Fixed-length token sequences in training order."""

    seq_length: int

    def units(self, sequences_per_unit: int) -> list[StreamUnit]:
        """The stream cut into units of about `sequences_per_unit` sequences."""
        ...

    def blocks(self, unit: StreamUnit, block_sequences: int) -> Iterator[Block]:
        """The unit's sequences, at most `block_sequences` at a time."""
        ...

    def sequences(self, numbers: Sequence[int]) -> dict[int, np.ndarray]:
        """The tokens of the sequences with these global numbers."""
        ...

    def identity(self) -> dict[str, Any]:
        """What identifies the stream's content (paths, sizes), for index manifests."""
        ...


def _file_identity(path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {"path": str(path.resolve()), "bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns}


class MegatronStream:
    """An indexed dataset whose items are the training sequences, in training order."""

    def __init__(self, prefix: str | os.PathLike[str], seq_length: int, batch_size: int) -> None:
        dataset = read_index(prefix)
        check_fixed_sequences(dataset, seq_length)
        self.index_path = dataset.index_path
        self.data_path = dataset.data_path
        self.dtype = dataset.dtype
        self.count = len(dataset)
        self.seq_length = seq_length
        self.batch_size = batch_size

    def _tokens(self) -> np.ndarray:
        flat = np.memmap(self.data_path, dtype=self.dtype, mode="r")
        return flat[: self.count * self.seq_length].reshape(self.count, self.seq_length)

    def units(self, sequences_per_unit: int) -> list[StreamUnit]:
        """Ranges of `sequences_per_unit` sequences (byte ranges of the `.bin`)."""
        step = max(1, sequences_per_unit)
        return [StreamUnit(i, min(i + step, self.count)) for i in range(0, self.count, step)]

    def blocks(self, unit: StreamUnit, block_sequences: int) -> Iterator[Block]:
        """Blocks of the unit read from the memory-mapped `.bin`."""
        tokens = self._tokens()
        for start in range(unit.first, unit.stop, max(1, block_sequences)):
            stop = min(start + block_sequences, unit.stop)
            batches = np.arange(start, stop, dtype=np.int64) // self.batch_size
            yield Block(start, np.asarray(tokens[start:stop]), batches)

    def sequences(self, numbers: Sequence[int]) -> dict[int, np.ndarray]:
        """Random reads of single sequences."""
        tokens = self._tokens()
        return {int(n): np.array(tokens[int(n)]) for n in sorted(set(numbers))}

    def identity(self) -> dict[str, Any]:
        """The two files and the stream's shape."""
        return {
            "layout": "megatron",
            "index": _file_identity(self.index_path),
            "data": _file_identity(self.data_path),
            "seq_length": self.seq_length,
            "batch_size": self.batch_size,
        }


class ParquetStream:
    """Parquet rows of token ids (a list column) and their batch index, in training order."""

    def __init__(
        self,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        seq_length: int,
        *,
        tokens_column: str = "token_ids",
        batch_column: str = "batch_idx",
    ) -> None:
        import pyarrow.parquet as pq

        self.files = expand_paths(paths, accept=lambda p: p.suffix.lower() == ".parquet")
        self.seq_length = seq_length
        self.tokens_column = tokens_column
        self.batch_column = batch_column
        self.groups: list[tuple[int, int, int, int]] = []
        first = 0
        for number, path in enumerate(self.files):
            metadata = pq.ParquetFile(path).metadata
            names = set(pq.ParquetFile(path).schema_arrow.names)
            for column in (tokens_column, batch_column):
                if column not in names:
                    raise InputError(f"no column {column!r}", path=str(path), field=column)
            for group in range(metadata.num_row_groups):
                rows = metadata.row_group(group).num_rows
                self.groups.append((first, first + rows, number, group))
                first += rows
        self.count = first

    def units(self, sequences_per_unit: int) -> list[StreamUnit]:
        """One unit per row group."""
        return [StreamUnit(first, stop, file, group) for first, stop, file, group in self.groups]

    def _read(self, file: int, group: int, first: int) -> Block:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.files[file]
        table = pq.ParquetFile(path).read_row_group(
            group, columns=[self.tokens_column, self.batch_column]
        )
        column = table.column(self.tokens_column).combine_chunks()
        if not pa.types.is_list(column.type) and not pa.types.is_large_list(column.type):
            message = "expected a list of token ids"
            raise InputError(message, path=str(path), field=self.tokens_column)
        lengths = np.diff(np.asarray(column.offsets))
        wrong = np.flatnonzero(lengths != self.seq_length)
        if wrong.size:
            row = first + int(wrong[0]) - self._file_first(file) + 1
            raise InputError(
                f"{int(lengths[wrong[0]])} token ids, expected seq_length {self.seq_length}",
                path=str(path),
                line=row,
                field=self.tokens_column,
            )
        start = int(np.asarray(column.offsets)[0])
        values = np.asarray(column.values)[start : start + lengths.sum()]
        tokens = values.reshape(-1, self.seq_length)
        batches = np.asarray(table.column(self.batch_column).to_numpy(), dtype=np.int64)
        return Block(first, tokens, batches)

    def _file_first(self, file: int) -> int:
        return next(first for first, _, number, _ in self.groups if number == file)

    def blocks(self, unit: StreamUnit, block_sequences: int) -> Iterator[Block]:
        """The unit's row group as one block."""
        yield self._read(unit.file, unit.row_group, unit.first)

    def sequences(self, numbers: Sequence[int]) -> dict[int, np.ndarray]:
        """Sequences by global row number (each row group needed is read once)."""
        out: dict[int, np.ndarray] = {}
        wanted = sorted(set(int(n) for n in numbers))
        for first, stop, file, group in self.groups:
            inside = [n for n in wanted if first <= n < stop]
            if inside:
                block = self._read(file, group, first)
                out.update({n: np.array(block.tokens[n - first]) for n in inside})
        return out

    def identity(self) -> dict[str, Any]:
        """The files and the stream's shape."""
        return {
            "layout": "parquet",
            "files": [_file_identity(path) for path in self.files],
            "seq_length": self.seq_length,
            "columns": [self.tokens_column, self.batch_column],
        }


def write_parquet_stream(
    path: str | os.PathLike[str],
    tokens: np.ndarray,
    batches: np.ndarray,
    *,
    rows_per_group: int = 1024,
    tokens_column: str = "token_ids",
    batch_column: str = "batch_idx",
) -> None:
    """Write sequences (n, seq_length) and their batches as a Parquet stream file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tipqa.core.jsonl import atomic_open

    count, length = tokens.shape
    flat = pa.array(np.ascontiguousarray(tokens).reshape(-1))
    offsets = pa.array(np.arange(0, count * length + 1, length, dtype=np.int32))
    table = pa.table(
        {tokens_column: pa.ListArray.from_arrays(offsets, flat), batch_column: pa.array(batches)}
    )
    with atomic_open(path) as handle:
        pq.write_table(table, handle, row_group_size=rows_per_group)
