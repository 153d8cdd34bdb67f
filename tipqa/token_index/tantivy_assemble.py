"""One tantivy index from parts written in parallel, with every document id indexed once.

A tantivy index is its segment files plus `meta.json`, which lists the segments (their ids are
random UUIDs) with the schema and index settings. Parts written with the same schema are
therefore joined by moving their segment files into one folder and writing one `meta.json`
that lists all their segments; tantivy's merge policy then merges small segments at the next
commit. `.managed.json` (the files tantivy may garbage-collect) becomes the union of the parts'.

Duplicates: a document id may appear twice in the stream, in the same part or in two parts.
Every part keeps a ledger of (id hash, row, body bytes). The first occurrence in the stream
(the smallest row) is kept, every later one is deleted by its row, and counted with its bytes.
Equal hashes are confirmed on the stored ids, so a hash collision deletes nothing.
"""

from __future__ import annotations

import os
import shutil
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from tipqa.errors import InputError
from tipqa.jsonl import atomic_open
from tipqa.token_index import tantivy_schema as fields
from tipqa.token_index.tantivy_build import LEDGER, WORKER_LOG, read_ledger

META = "meta.json"
MANAGED = ".managed.json"
_NOT_MOVED = {META, MANAGED, LEDGER, WORKER_LOG, ".tantivy-meta.lock", ".tantivy-writer.lock"}
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


def ledger(parts: list[Path]) -> np.ndarray:
    """Every part's ledger as one (n, 3) int64 array of (id hash, row, body bytes)."""
    flat = array("q")
    for part in parts:
        flat.extend(read_ledger(part))
    return np.frombuffer(flat, dtype=np.int64).reshape(-1, 3)


def duplicate_candidates(entries: np.ndarray) -> np.ndarray:
    """Rows of entries whose id hash occurs more than once (every copy, first included)."""
    hashes = entries[:, 0]
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    return entries[counts[inverse] > 1, 1]


def later_copies(index: Any, rows: np.ndarray) -> list[int]:
    """Of the documents at `rows`, those whose id an earlier row (smaller) also has."""
    tantivy = fields.import_tantivy()
    searcher = index.searcher()
    query = tantivy.Query.term_set_query(index.schema, fields.ROW, [int(r) for r in rows])
    hits = searcher.search(query, len(rows), count=False).hits
    found = searcher.fast_field_values(fields.ROW, [address for _, address in hits])
    first: dict[str, int] = {}
    later: list[int] = []
    for (_, address), row in sorted(zip(hits, found, strict=True), key=lambda pair: pair[1]):
        doc_id = searcher.doc(address).get_first(fields.DOC_ID)
        if doc_id in first:
            later.append(int(row))
        else:
            first[doc_id] = int(row)
    return later


def finish(index: Any, parts: list[Path], text_analyzer: Any, heap_mb: int) -> dict[str, float]:
    """Delete later copies of duplicated ids, let tantivy merge, drop the part folders.

    Returns the duplicates removed and the bytes of text of the documents kept.
    """
    entries = ledger(parts)
    candidates = duplicate_candidates(entries)
    later = later_copies(index, candidates) if candidates.size else []
    removed_bytes = int(entries[np.isin(entries[:, 1], later), 2].sum()) if later else 0
    if later or len(parts) > 1:
        tantivy = fields.import_tantivy()
        fields.register_analyzers(index, text_analyzer)
        writer = index.writer(max(heap_mb, 15) * 1_000_000, 1)
        try:
            for start in range(0, len(later), _DELETE_BATCH):
                rows = later[start : start + _DELETE_BATCH]
                writer.delete_documents_by_query(
                    tantivy.Query.term_set_query(index.schema, fields.ROW, rows)
                )
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()
        index.reload()
    for part in parts:
        if part.name.startswith("part-"):
            shutil.rmtree(part)
        else:
            (part / LEDGER).unlink()
    return {"duplicates": len(later), "bytes": int(entries[:, 2].sum()) - removed_bytes}
