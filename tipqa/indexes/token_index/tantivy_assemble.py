"""One tantivy index from parts written in parallel, with every document id indexed once.

A tantivy index is its segment files plus `meta.json`, which lists the segments (their ids are
random UUIDs) with the schema and index settings. Parts written with the same schema are
therefore joined by moving their segment files into one folder and writing one `meta.json`
that lists all their segments; tantivy's merge policy then merges small segments at the next
commit. `.managed.json` (the files tantivy may garbage-collect) becomes the union of the parts'.

The parts' ledgers (id hash, row, body bytes, id bytes, and the ids) become the id table of
`tantivy_ids`. Duplicates: a document id may appear twice in the stream, in the same part or
in two parts. The first occurrence in the stream (the smallest row) is kept, every later one
is deleted by its row, and counted with its bytes. Equal hashes are confirmed on the ids, so
a hash collision deletes nothing.
"""

from __future__ import annotations

import os
import shutil
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open
from tipqa.indexes.token_index import tantivy_schema as fields
from tipqa.indexes.token_index.tantivy_build import LEDGER, PART_IDS, WORKER_LOG, read_ledger
from tipqa.indexes.token_index.tantivy_ids import IdTable, write_table

META = "meta.json"
MANAGED = ".managed.json"
_NOT_MOVED = {
    META,
    MANAGED,
    LEDGER,
    PART_IDS,
    WORKER_LOG,
    ".tantivy-meta.lock",
    ".tantivy-writer.lock",
}
_DELETE_BATCH = 1024


def _read_meta(folder: Path) -> dict[str, Any]:
    """A part's meta.json."""
    try:
        return orjson.loads((folder / META).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(
            f"unreadable tantivy meta of an index part: {exc}", path=str(folder)
        ) from exc


def assemble(parts: list[Path], target: Path) -> None:
    """Move the segments of `parts` (folders under `target`) into `target` as one index."""
    metas = [_read_meta(part) for part in parts]
    first = metas[0]
    for part, meta in zip(parts, metas, strict=True):
        if meta["schema"] != first["schema"] or meta["index_settings"] != first["index_settings"]:
            raise InputError("index parts differ in schema or settings", path=str(part))
    managed: set[str] = set()
    for part in parts:
        managed.update(orjson.loads((part / MANAGED).read_bytes()))
        for path in part.iterdir():
            if path.name not in _NOT_MOVED:
                os.rename(path, target / path.name)
    joined = {
        **first,
        "segments": [segment for meta in metas for segment in meta["segments"]],
        "opstamp": max(meta["opstamp"] for meta in metas),
    }
    with atomic_open(target / MANAGED) as out:
        out.write(orjson.dumps(sorted((managed - {META}) | {META})))
    with atomic_open(target / META) as out:
        out.write(orjson.dumps(joined))


def ledger(parts: list[Path]) -> tuple[np.ndarray, bytes]:
    """Every part's ledger as one (n, 4) int64 array of (id hash, row, body bytes, id bytes),
    and their ids' bytes in the same order."""
    flat = array("q")
    for part in parts:
        flat.extend(read_ledger(part))
    blob = b"".join((part / PART_IDS).read_bytes() for part in parts)
    return np.frombuffer(flat, dtype=np.int64).reshape(-1, 4), blob


def later_copies(entries: np.ndarray, table: IdTable) -> list[int]:
    """Rows whose id an earlier row (smaller) also has: candidates by equal hashes, then
    confirmed on the ids."""
    _, inverse, counts = np.unique(entries[:, 0], return_inverse=True, return_counts=True)
    rows = np.sort(entries[counts[inverse] > 1, 1]).tolist()
    seen: set[str] = set()
    later = []
    for row, doc_id in zip(rows, table.ids(rows), strict=True):
        if doc_id in seen:
            later.append(row)
        seen.add(doc_id)
    return later


def finish(
    index: Any, target: Path, parts: list[Path], text_analyzer: Any, heap_mb: int
) -> dict[str, float]:
    """Write the id table, delete later copies of duplicated ids, let tantivy merge, drop the
    part folders. Returns the duplicates removed and the bytes of text of the documents kept.
    """
    entries, blob = ledger(parts)
    write_table(target, entries[:, 1], entries[:, 3], blob)
    later = later_copies(entries, IdTable(target))
    removed_bytes = int(entries[np.isin(entries[:, 1], later), 2].sum()) if later else 0
    if later or len(parts) > 1:
        tantivy = fields.import_tantivy()
        fields.register_analyzers(index, text_analyzer)
        with fields.committing(index.writer(max(heap_mb, 15) * 1_000_000, 1)) as writer:
            for start in range(0, len(later), _DELETE_BATCH):
                rows = later[start : start + _DELETE_BATCH]
                writer.delete_documents_by_query(
                    tantivy.Query.term_set_query(index.schema, fields.ROW, rows)
                )
        index.reload()
    for part in parts:
        if part == target:
            (part / LEDGER).unlink()
            (part / PART_IDS).unlink()
        else:
            shutil.rmtree(part)
    return {"duplicates": len(later), "bytes": int(entries[:, 2].sum()) - removed_bytes}
