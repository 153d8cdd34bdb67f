"""A persistent cache of LLM outputs, shared by worker processes on any number of hosts.

Keys are made by `tipqa.llm.cached_chat` (the chat-model seam, where every LLM answer passes).
A cache file of another `SCHEMA` is refused with the path to move away. The cache is a folder
of SQLite files, one per writing process, read together (`tipqa.core.writer_files`): no file
has two writers, so hosts sharing an output root over a network filesystem never depend on
SQLite's locks. A key that two processes stored holds an answer to the same prompt in each; the
process's own file is read first, then the others by name. An older cache of one file,
`<folder>.sqlite`, is read too.

Answers are stored as they arrive (`StoreOnArrival`): a thread commits each answer at once,
together with those that arrived while the previous commit was being written, so that a
transaction per answer (a disk sync each) does not limit how fast answers can come.
"""

from __future__ import annotations

import logging
import os
import queue
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
_CREATE = (
    "CREATE TABLE IF NOT EXISTS llm_cache ("
    "key TEXT PRIMARY KEY, backend TEXT NOT NULL, value BLOB NOT NULL, created REAL NOT NULL"
    ") WITHOUT ROWID"
)
"""The cache's table. Its column `backend` holds the asker (`desc:provider:model`), named so in
the files of schema 2, which a rename would make unreadable."""


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
        """Store (key, asker, value) triples in one transaction of this process's file."""
        if not items:
            return 0
        now = time.time()
        rows = [(key, asker, orjson.dumps(dict(value)), now) for key, asker, value in items]
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

    def put(self, key: str, asker: str, value: Mapping[str, Any]) -> None:
        """Store one value."""
        self.put_many([(key, asker, value)])

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


class StoreOnArrival:
    """Stores (key, asker, value) triples in `cache` as they arrive, on a thread of its own.

    Each commit takes every triple that arrived while the one before was being written, so an
    answer waits at most for one commit. `close()` waits until all are stored and returns how
    many were; a failed commit is raised there, or by the next `put`.
    """

    def __init__(self, cache: LLMCache) -> None:
        self.cache = cache
        self.stored = 0
        self._queue: queue.SimpleQueue[tuple[str, str, Mapping[str, Any]] | None] = (
            queue.SimpleQueue()
        )
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._commit, name="tipqa-llm-cache", daemon=True)
        self._thread.start()

    def put(self, key: str, asker: str, value: Mapping[str, Any]) -> None:
        """Queue one triple; it is committed at once or with the next group."""
        if self._failure is not None:
            raise self._failure
        self._queue.put((key, asker, value))

    def close(self) -> int:
        """Wait until every queued triple is committed; how many were."""
        self._queue.put(None)
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self.stored

    def _commit(self) -> None:
        done = False
        while not done:
            group = [self._queue.get()]
            while not self._queue.empty():
                group.append(self._queue.get())
            done = any(item is None for item in group)
            items = [item for item in group if item is not None]
            if self._failure is not None or not items:
                continue
            try:
                self.stored += self.cache.put_many(items)
            except Exception as exc:  # any: raised in the caller's thread by put() or close()
                self._failure = exc


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
