"""The chunk store: one SQLite file per writing process, read together, an older file read."""

from __future__ import annotations

import multiprocessing
import sqlite3

import numpy as np

from tipqa.core.records import Chunk, Document
from tipqa.indexes.vector_index.chunk_store import _CREATE, ChunkStore, document_key

DIMENSION = 4


def _row(worker: int, i: int) -> tuple[str, str, list[Chunk], np.ndarray]:
    """A document of two chunks whose vectors say who wrote it."""
    document = Document(id=f"d{worker}-{i}", text=f"text {worker} {i}")
    chunks = [Chunk(id=f"{document.id}#{j}", doc_id=document.id, index=j, text="t") for j in (0, 1)]
    return document_key(document), document.id, chunks, np.full((2, DIMENSION), worker + i / 1000)


def _writer(store: ChunkStore, worker: int, count: int) -> None:
    for start in range(0, count, 10):
        store.put([_row(worker, i) for i in range(start, start + 10)])
        store.keys_present(_row(other, start)[0] for other in range(4))


def test_several_processes_write_at_once_nothing_lost_nothing_corrupt(tmp_path) -> None:
    store = ChunkStore(tmp_path / "chunks", DIMENSION)
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(store, w, 100)) for w in range(3)]
    for process in workers:
        process.start()
    _writer(store, 3, 100)
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    files = sorted((tmp_path / "chunks").iterdir())
    assert len(files) == 4
    for file in files:
        assert sqlite3.connect(file).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    reread = ChunkStore(tmp_path / "chunks", DIMENSION)
    assert len(reread) == 400 and reread.chunk_count() == 800
    wanted = {_row(w, i)[0]: (w, i) for w in range(4) for i in range(100)}
    found = reread.get(wanted)
    assert found.keys() == wanted.keys()
    for key, (w, i) in wanted.items():
        assert found[key].chunks[1].id == f"d{w}-{i}#1"
        assert np.allclose(found[key].vectors, w + i / 1000)


def test_an_older_single_file_store_is_read(tmp_path) -> None:
    key, doc_id, chunks, vectors = _row(0, 0)
    with sqlite3.connect(tmp_path / "chunks.sqlite") as old:
        old.execute(_CREATE)
        encoded = b'[["d0-0#0", "d0-0", 0, "t"], ["d0-0#1", "d0-0", 1, "t"]]'
        old.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?)",
            (key, doc_id, encoded, vectors.astype(np.float32).tobytes()),
        )
    store = ChunkStore(tmp_path / "chunks", DIMENSION)
    assert store.keys_present([key, "other"]) == {key}
    assert store.get([key])[key].chunks == chunks
