"""A persistent cache of LLM outputs, shared by worker processes on any number of hosts.

The key is the SHA-256 of (`CACHE_VERSION`, the task, the settings' `identity()`, which holds the
model and the prompt template's hash, and the exact inputs), so a change of model, template or
any setting that decides an answer never reuses one; knobs (concurrency, batch size) do not count.
A cache file of another `SCHEMA` is refused with the path to move away. The cache is a folder
of SQLite files, one per writing process, read together (`tipqa.core.writer_files`): no file
has two writers, so hosts sharing an output root over a network filesystem never depend on
SQLite's locks. A key that two processes stored holds an answer to the same prompt in each; the
process's own file is read first, then the others by name. An older cache of one file,
`<folder>.sqlite`, is read too.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import InputError
from tipqa.core.writer_files import WriterFiles

log = logging.getLogger(__name__)

SCHEMA = 2
CACHE_VERSION = 2
_CREATE = (
    "CREATE TABLE IF NOT EXISTS llm_cache ("
    "key TEXT PRIMARY KEY, backend TEXT NOT NULL, value BLOB NOT NULL, created REAL NOT NULL"
    ") WITHOUT ROWID"
)


def cache_key(task: str, identity: Mapping[str, Any], inputs: Mapping[str, Any]) -> str:
    """Hex SHA-256 of `CACHE_VERSION`, the task, the settings' identity and the inputs."""
    payload = {
        "version": CACHE_VERSION,
        "task": task,
        "settings": dict(identity),
        "inputs": dict(inputs),
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


class LLMCache:
    """Key → JSON value store in a folder of SQLite files; safe across threads, processes, hosts."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._files = WriterFiles(
            self.path, [_CREATE], _check_schema, kind="LLM cache", busy_timeout=busy_timeout
        )

    def __repr__(self) -> str:
        return f"LLMCache({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "busy_timeout": self.busy_timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], busy_timeout=state["busy_timeout"])  # type: ignore[misc]

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored values of those keys that are present (an unreadable value is a miss)."""
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for key, blob in self._files.select_keys("value", "llm_cache", keys, found):
                if key in found:
                    continue
                try:
                    value = orjson.loads(blob)
                except orjson.JSONDecodeError:
                    value = None
                if isinstance(value, dict):
                    found[key] = value
                else:
                    log.warning("%s: unreadable cache entry %s ignored", self.path, key)
        return found

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value of `key`, or None."""
        return self.get_many([key]).get(key)

    def put_many(self, items: Sequence[tuple[str, str, Mapping[str, Any]]]) -> int:
        """Store (key, backend, value) triples in one transaction of this process's file."""
        if not items:
            return 0
        now = time.time()
        rows = [(key, backend, orjson.dumps(dict(value)), now) for key, backend, value in items]
        with self._lock:
            conn = self._files.writer()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO llm_cache (key, backend, value, created) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return len(rows)

    def put(self, key: str, backend: str, value: Mapping[str, Any]) -> None:
        """Store one value."""
        self.put_many([(key, backend, value)])

    def keys(self) -> set[str]:
        """Every stored key, over all the cache's files."""
        with self._lock:
            return {key for (key,) in self._files.query("SELECT key FROM llm_cache")}

    def files(self) -> list[Path]:
        """The cache's SQLite files."""
        return self._files.files()

    def __len__(self) -> int:
        return len(self.keys())

    def close(self) -> None:
        """Close this process's connections (a later call reopens them)."""
        with self._lock:
            self._files.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_schema(conn: sqlite3.Connection, path: Path, own: bool) -> None:
    """Mark a new file of this process with `SCHEMA`; refuse a file of another, naming it."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0 and own:
        conn.execute(f"PRAGMA user_version = {SCHEMA}")
    elif version not in (0, SCHEMA):
        raise InputError(
            f"LLM cache schema {version}, this version reads {SCHEMA}: its keys cannot "
            "be matched, so none of its answers can be reused; move the file away or "
            "delete it (a new one is made)",
            path=str(path),
        )
