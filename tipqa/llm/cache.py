"""A persistent cache of LLM outputs in one SQLite file, shared by worker processes.

The key is the SHA-256 of (`CACHE_VERSION`, the task, the settings' `identity()`, which holds the
model and the prompt template's hash, and the exact inputs), so a change of model, template or
any setting that decides an answer never reuses one; knobs (concurrency, batch size) do not count.
A cache file of another `SCHEMA` is refused with the path to move away. The database runs in
WAL mode with a busy timeout: several processes may read and write it at once. Each process (and
each fork) opens its own connection.
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

from tipqa.errors import InputError

log = logging.getLogger(__name__)

SCHEMA = 2
CACHE_VERSION = 2
_CHUNK = 500
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
    """Key → JSON value store on SQLite (WAL mode); safe across threads and processes."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._pid = -1
        self._conn: sqlite3.Connection | None = None
        self._connection()

    def __repr__(self) -> str:
        return f"LLMCache({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "busy_timeout": self.busy_timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], busy_timeout=state["busy_timeout"])  # type: ignore[misc]

    def _connection(self) -> sqlite3.Connection:
        """This process's connection, opened (and the table created) on first use."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(_CREATE)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                conn.execute(f"PRAGMA user_version = {SCHEMA}")
            elif version != SCHEMA:
                raise InputError(
                    f"LLM cache schema {version}, this version reads {SCHEMA}: its keys cannot "
                    "be matched, so none of its answers can be reused; move the file away or "
                    "delete it (a new one is made)",
                    path=str(self.path),
                )
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a usable SQLite cache: {exc}", path=str(self.path)) from exc
        self._conn, self._pid = conn, os.getpid()
        return conn

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored values of those keys that are present (an unreadable value is a miss)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, value FROM llm_cache WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, blob in rows:
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
        """Store (key, backend, value) triples in one transaction; return how many."""
        if not items:
            return 0
        now = time.time()
        rows = [(key, backend, orjson.dumps(dict(value)), now) for key, backend, value in items]
        with self._lock:
            conn = self._connection()
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

    def __len__(self) -> int:
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]

    def close(self) -> None:
        """Close this process's connection (a later call reopens it)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
