"""The chunks and vectors of the documents a candidate vector stage embedded.

A document is stored under a key of its id and the hash of its text (a changed document is a
new key), with all its chunks and their vectors in one row, so a document is either wholly in
the store or not at all. The store of one build holds one chunking and one embedder (the
build's folder is named by their fingerprint); rows are committed per embedding batch, so a
kill loses at most the batch being embedded, and a rerun embeds only what is missing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from tipqa.core.errors import InputError
from tipqa.core.records import Chunk, Document
from tipqa.core.writer_files import WriterFiles

_CREATE = (
    "CREATE TABLE IF NOT EXISTS documents ("
    "key TEXT PRIMARY KEY, doc_id TEXT NOT NULL, chunks BLOB NOT NULL, vectors BLOB NOT NULL"
    ") WITHOUT ROWID"
)


def document_key(document: Document) -> str:
    """The store's key of a document: its id and the hash of its text."""
    digest = hashlib.blake2b(document.text.encode("utf-8", "surrogatepass"), digest_size=16)
    return f"{document.id}\x00{digest.hexdigest()}"


@dataclass
class StoredDocument:
    """A document's chunks and their vectors (one row per chunk, in chunk order)."""

    chunks: list[Chunk]
    vectors: np.ndarray


class ChunkStore:
    """Document key → its chunks and their vectors, in a folder of SQLite files (one per writer)."""

    def __init__(self, path: str | os.PathLike[str], dimension: int) -> None:
        self.path = Path(path)
        self.dimension = dimension
        self._files = WriterFiles(self.path, [_CREATE], _check_table, kind="chunk store")

    def keys_present(self, keys: Iterable[str]) -> set[str]:
        """The keys among `keys` that the store holds."""
        return {key for (key,) in self._files.select_keys("", "documents", keys)}

    def put(self, rows: Sequence[tuple[str, str, list[Chunk], np.ndarray]]) -> None:
        """Store (key, document id, chunks, vectors) rows in one transaction of the own file."""
        values = []
        for key, doc_id, chunks, vectors in rows:
            matrix = np.ascontiguousarray(vectors, dtype=np.float32)
            if matrix.shape != (len(chunks), self.dimension):
                raise InputError(
                    f"chunk store: {len(chunks)} chunks but vectors of shape {matrix.shape}",
                    path=str(self.path),
                )
            encoded = orjson.dumps([[c.id, c.doc_id, c.index, c.text] for c in chunks])
            values.append((key, doc_id, encoded, matrix.tobytes()))
        db = self._files.writer()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                "INSERT OR REPLACE INTO documents (key, doc_id, chunks, vectors) VALUES (?,?,?,?)",
                values,
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def get(self, keys: Iterable[str]) -> dict[str, StoredDocument]:
        """The stored documents of those keys that are present."""
        found: dict[str, StoredDocument] = {}
        for key, chunks, vectors in self._files.select_keys(
            "chunks, vectors", "documents", keys, found
        ):
            if key in found:
                continue
            listed = [
                Chunk(id=c[0], doc_id=c[1], index=c[2], text=c[3]) for c in orjson.loads(chunks)
            ]
            matrix = np.frombuffer(vectors, dtype=np.float32).reshape(-1, self.dimension)
            found[key] = StoredDocument(listed, matrix)
        return found

    def _sizes(self) -> dict[str, int]:
        """Each stored key's vector bytes (a key in several files counted once)."""
        sizes: dict[str, int] = {}
        for key, size in self._files.query("SELECT key, length(vectors) FROM documents"):
            sizes.setdefault(key, int(size))
        return sizes

    def __len__(self) -> int:
        return len(self._sizes())

    def chunk_count(self) -> int:
        """Chunks stored, over every document."""
        return sum(size // (4 * self.dimension) for size in self._sizes().values())

    def close(self) -> None:
        """Close the connections."""
        self._files.close()


def _check_table(conn: sqlite3.Connection, path: Path, own: bool) -> None:
    """Refuse a file that is not a chunk store (no `documents` table), naming it."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    if tables and "documents" not in tables:
        raise InputError("not a chunk store: no documents table", path=str(path))
