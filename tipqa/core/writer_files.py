"""A store in a folder of SQLite files, one per writing process, read together.

Several hosts may write one output root at once, over a network filesystem where SQLite's
locks (and the memory that WAL mode shares between a file's users) cannot be trusted. So no
file has two writers: each process writes only its own file, named by its host and process id
(a forked process gets a file of its own), and a look-up reads every file in the folder. Files
are in rollback-journal mode, not WAL, and a process opens the files of others read-only. A
file that cannot be read at the moment (its writer is creating it, or committing on a
filesystem without working locks) is a miss for that look-up and is read again on the next.
Its own file is the writer's alone, so its writes never wait for another process.

An older store of one SQLite file beside the folder (`<folder>.sqlite`) is read as one more
file and never written.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from pathlib import Path

from tipqa.core.errors import InputError

log = logging.getLogger(__name__)

SUFFIX = ".sqlite"
KEYS_PER_QUERY = 500
"""Keys bound in one `key IN (...)` look-up."""
Check = Callable[[sqlite3.Connection, Path, bool], None]


def writer_name() -> str:
    """This process's file name: its host and process id."""
    host = "".join(c if c.isalnum() or c in "-_." else "_" for c in socket.gethostname())
    return f"{host or 'host'}-{os.getpid()}{SUFFIX}"


class WriterFiles:
    """The SQLite files of one store: this process's own (written), every file (read).

    `create` are the statements that make an empty file's tables; `check(connection, path,
    own)` is called on every file opened (`own`: this process's, written) and raises for a file
    this version cannot read (another schema).
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        create: Sequence[str],
        check: Check,
        *,
        kind: str,
        busy_timeout: float = 60.0,
    ) -> None:
        self.folder = Path(folder)
        self.create = tuple(create)
        self.check = check
        self.kind = kind
        self.busy_timeout = busy_timeout
        if self.folder.is_file():
            raise InputError(
                f"{kind}: a folder of SQLite files is expected here, not a file; an older "
                f"single-file store is read from {self.folder.name}{SUFFIX} beside the folder",
                path=str(self.folder),
            )
        self.legacy = self.folder.with_name(self.folder.name + SUFFIX)
        self._pid = -1
        self._own: sqlite3.Connection | None = None
        self._others: dict[Path, sqlite3.Connection] = {}
        self._unreadable: set[Path] = set()
        for _ in self.readers():
            pass

    @property
    def own_path(self) -> Path:
        """This process's file."""
        return self.folder / writer_name()

    def _reset_after_fork(self) -> None:
        """Forget the connections of a parent process (a fork writes a file of its own)."""
        if self._pid != os.getpid():
            self._own, self._others, self._unreadable = None, {}, set()
            self._pid = os.getpid()

    def writer(self) -> sqlite3.Connection:
        """The connection to this process's own file, created with its tables on first use."""
        self._reset_after_fork()
        if self._own is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.own_path
            try:
                conn = self._connect(path)
                conn.execute("PRAGMA journal_mode = DELETE")
                conn.execute("PRAGMA synchronous = NORMAL")
                for statement in self.create:
                    conn.execute(statement)
                self.check(conn, path, True)
            except sqlite3.DatabaseError as exc:
                raise InputError(
                    f"{self.kind}: not a usable SQLite file: {exc}", path=str(path)
                ) from exc
            self._own = conn
        return self._own

    def readers(self) -> Iterator[tuple[Path, sqlite3.Connection, bool]]:
        """Every readable file's path and connection, and whether it is this process's own file
        (first), then the others by name.

        The folder is listed again on every call, so files that other writers created since
        are read too.
        """
        self._reset_after_fork()
        own = self.own_path
        if self._own is not None:
            yield own, self._own, True
        paths = sorted(self.folder.glob(f"*{SUFFIX}")) if self.folder.is_dir() else []
        if self.legacy.is_file():
            paths.append(self.legacy)
        for path in paths:
            if path == own and self._own is not None:
                continue
            conn = self._others.get(path) or self._open_other(path)
            if conn is not None:
                yield path, conn, False

    def _open_other(self, path: Path) -> sqlite3.Connection | None:
        """A read-only connection to another writer's file, or None while it is unreadable."""
        legacy = path == self.legacy
        try:
            conn = self._connect(path) if legacy else self._connect(path, read_only=True)
            self.check(conn, path, False)
        except sqlite3.DatabaseError as exc:
            if legacy:
                raise InputError(
                    f"{self.kind}: not a usable SQLite file: {exc}", path=str(path)
                ) from exc
            self._skip(path, exc)
            return None
        self._others[path] = conn
        return conn

    def query(self, sql: str, parameters: Sequence[object] = ()) -> Iterator[tuple]:
        """The rows of `sql` from every file in turn (a file unreadable now is left out)."""
        for path, conn, own in self.readers():
            if own:
                yield from conn.execute(sql, parameters).fetchall()
                continue
            try:
                rows = conn.execute(sql, parameters).fetchall()
            except sqlite3.DatabaseError as exc:
                self._skip(path, exc)
                continue
            yield from rows

    def select_keys(
        self, columns: str, table: str, keys: Iterable[str], found: Container[str] = ()
    ) -> Iterator[tuple]:
        """The rows `(key, *columns)` of `table` for `keys`, from every file, asked in batches.

        A key already in `found` (the caller's results, filled as the rows arrive) when its
        batch is asked is not asked again.
        """
        wanted = list(dict.fromkeys(keys))
        selected = f"key, {columns}" if columns else "key"
        for start in range(0, len(wanted), KEYS_PER_QUERY):
            batch = [key for key in wanted[start : start + KEYS_PER_QUERY] if key not in found]
            if batch:
                marks = ",".join("?" * len(batch))
                yield from self.query(
                    f"SELECT {selected} FROM {table} WHERE key IN ({marks})", batch
                )

    def _skip(self, path: Path, exc: sqlite3.DatabaseError) -> None:
        """Note a file left out of a look-up (logged once per file)."""
        if path not in self._unreadable:
            self._unreadable.add(path)
            log.warning("%s: %s left out of a look-up for now: %s", self.kind, path, exc)

    def _connect(self, path: Path, *, read_only: bool = False) -> sqlite3.Connection:
        """A connection in autocommit mode, usable from any thread."""
        target = f"{path.resolve().as_uri()}?mode=ro" if read_only else str(path)
        conn = sqlite3.connect(
            target,
            uri=read_only,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        return conn

    def files(self) -> list[Path]:
        """The store's files now in the folder (and the older single file, when present)."""
        found = sorted(self.folder.glob(f"*{SUFFIX}")) if self.folder.is_dir() else []
        return [*found, self.legacy] if self.legacy.is_file() else found

    def close(self) -> None:
        """Close this process's connections (a later call reopens them)."""
        if self._pid == os.getpid():
            for conn in [self._own, *self._others.values()]:
                if conn is not None:
                    conn.close()
        self._own, self._others, self._unreadable = None, {}, set()
