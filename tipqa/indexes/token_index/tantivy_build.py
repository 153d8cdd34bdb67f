"""Writing the tantivy index on every core: one part per worker process, then one index.

The build stream is read once, in the calling process (parsing, checks, row numbers), and
handed in batches to `workers` processes through one bounded queue, so a worker that finishes
a batch early takes the next. Each worker prepares its documents' text (`tantivy_analysis`),
counts their tokens for the `repeats` field (`tantivy_schema`) and writes its own tantivy
index (a *part*) with one indexing thread. `tantivy_assemble` then puts the parts' segments
under one index and removes ids seen twice. With one worker, everything runs in the calling
process and its part is the index.

The Python side of a document (preparing and counting its text) costs about as much as
tantivy's indexing of it, so a single writer with several indexing threads, fed by one Python
thread, does not use more than about two cores; processes do.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson
from tqdm import tqdm

from tipqa.core.errors import InputError, TipqaError
from tipqa.core.records import Document
from tipqa.indexes.token_index import tantivy_schema as fields
from tipqa.indexes.token_index.tantivy_analysis import Tokenization, analyse, analyzer

MAX_ID_BYTES = 65_000  # tantivy silently skips terms longer than about 65,530 bytes
MIN_HEAP_MB_PER_WRITER = 15  # tantivy's own lower bound for a writer thread's arena
BATCH_DOCS = 1000
BATCH_CHARS = 4_000_000
WORKER_LOG = "worker.log"
LOG_LINES, LOG_CHARS = 20, 2000  # the end of a failed worker's log that its error quotes
PACKAGE_ROOT = Path(os.path.abspath(__file__)).parents[2]  # the folder holding this `tipqa`
LEDGER = "part-ledger.bin"  # per part: (id hash, row, body bytes, id bytes) per document, int64
PART_IDS = "part-ids.bin"  # per part: the ids' UTF-8 bytes, in the ledger's order
# a worker's whole program; its arguments: its part, then the sys.path to import from
_BOOT = """import sys
sys.path[:] = sys.argv[2:]
from tipqa.indexes.token_index.tantivy_worker import main
main(sys.argv[1])
"""

Entry = tuple[int, str, str, bytes | None]  # row, doc_id, text, meta as JSON (or None)

log = logging.getLogger(__name__)


class WorkerError(TipqaError):
    """A worker process writing a part of the index failed (its error is in the message)."""


@dataclass
class StreamCounts:
    """What the calling process saw of the build stream."""

    documents: int = 0
    empty: int = 0
    parts: list[Path] = field(default_factory=list)


def available_cores() -> int:
    """Cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def id_hash(raw: bytes) -> int:
    """A 64-bit hash of a document id's bytes, the same in every process (equal hashes are
    confirmed on the ids, so it needs to be fast more than strong)."""
    return (zlib.crc32(raw) << 31) ^ zlib.adler32(raw)


def check_document(document: Document, number: int) -> None:
    """Raise InputError naming the document when its id or text cannot be indexed."""
    where = f"document {number}"
    if not isinstance(document.id, str) or not document.id:
        raise InputError(f"{where}: id must be a non-empty string", field="id")
    if len(document.id.encode()) > MAX_ID_BYTES:
        raise InputError(
            f"{where}: id longer than {MAX_ID_BYTES} bytes ({document.id[:60]!r}...)", field="id"
        )
    if not isinstance(document.text, str):
        raise InputError(f"{where} ({document.id!r}): text must be a string", field="text")


def write_part(
    folder: Path, batches: Iterable[list[Entry]], heap_bytes: int, mode: Tokenization
) -> None:
    """Write the entries of `batches` as a tantivy index in `folder`, and its ledger."""
    tantivy = fields.import_tantivy()
    index = tantivy.Index(fields.new_schema(), path=str(folder))
    fields.register_analyzers(index, analyzer(mode.kind))
    ledger = array("q")
    ids = bytearray()
    with fields.committing(index.writer(heap_bytes, 1)) as writer:
        for batch in batches:
            for row, doc_id, text, meta in batch:
                try:
                    body = text.encode()
                except UnicodeEncodeError as exc:
                    raise InputError(
                        f"document {doc_id!r}: text cannot be written as UTF-8 ({exc})",
                        field="text",
                    ) from exc
                prepared, repeats = analyse(text, mode.blank)
                entry = tantivy.Document()
                entry.add_text(fields.DOC_ID, doc_id)
                entry.add_integer(fields.ROW, row)
                entry.add_integer(fields.SIZE, len(body))
                entry.add_text(fields.TEXT, prepared)
                entry.add_text(fields.REPEATS, repeats)
                entry.add_bytes(fields.BODY, body)
                if meta is not None:
                    entry.add_bytes(fields.META, meta)
                writer.add_document(entry)
                raw_id = doc_id.encode()
                ids += raw_id
                ledger.extend((id_hash(raw_id), row, len(body), len(raw_id)))
    with open(folder / LEDGER, "wb") as out:
        ledger.tofile(out)
    (folder / PART_IDS).write_bytes(ids)


def read_ledger(folder: Path) -> array:
    """The (id hash, row, body bytes, id bytes) of a part's documents, flat."""
    ledger = array("q")
    ledger.frombytes((folder / LEDGER).read_bytes())
    return ledger


def batches(documents: Iterable[Document], counts: StreamCounts) -> Iterator[list[Entry]]:
    """Checked, non-empty documents with their rows, in batches; empty ones only counted."""
    batch: list[Entry] = []
    chars = 0
    for number, document in enumerate(
        tqdm(documents, desc="token index", unit="doc", leave=False), start=1
    ):
        check_document(document, number)
        if not document.text.strip():
            counts.empty += 1
            continue
        meta = orjson.dumps(document.meta) if document.meta else None
        batch.append((counts.documents, document.id, document.text, meta))
        counts.documents += 1
        chars += len(document.text)
        if len(batch) >= BATCH_DOCS or chars >= BATCH_CHARS:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def write_parts(
    documents: Iterable[Document], folder: Path, workers: int, heap_mb: int, mode: Tokenization
) -> StreamCounts:
    """Write the stream as `workers` parts under `folder` (one part: `folder` itself)."""
    counts = StreamCounts()
    workers = max(1, min(workers, heap_mb // MIN_HEAP_MB_PER_WRITER))
    heap_bytes = heap_mb * 1_000_000 // workers
    if workers == 1:
        write_part(folder, batches(documents, counts), heap_bytes, mode)
        counts.parts = [folder]
        return counts
    counts.parts = [folder / f"part-{i:04d}" for i in range(workers)]
    for part in counts.parts:
        part.mkdir()
    _Pool(counts.parts, heap_bytes, mode).run(batches(documents, counts))
    return counts


def worker_command(part: Path) -> list[str]:
    """The command of a worker writing `part` that imports this process's code, whatever the cwd.

    `python -m` would put the working folder first on the worker's `sys.path`, where another
    copy of `tipqa` may lie: the worker gets this process's `sys.path` instead, with the
    folder of this `tipqa` first.
    """
    path = [str(PACKAGE_ROOT), *(str(entry) for entry in sys.path)]
    return [sys.executable, "-c", _BOOT, str(part), *path]


class _Pool:
    """Worker processes (`worker_command`) that write the parts.

    Batches go from one bounded queue to the workers through one feeding thread per worker,
    which writes them to the worker's stdin as length-prefixed pickles: whichever worker is
    free takes the next batch. The workers are started as fresh interpreters (not forked, and
    without re-running the caller's main module), each with its output in its part's log. A
    worker that fails, at any time, is reported with the end of that log, and this process
    logs the whole of it, since a failed build's folder is deleted.
    """

    def __init__(self, parts: list[Path], heap_bytes: int, mode: Tokenization) -> None:
        self.parts = parts
        self.setup = pickle.dumps((heap_bytes, mode.kind, mode.blank))
        self.work: queue.Queue[bytes | None] = queue.Queue(maxsize=2 * len(parts))
        self.processes: list[subprocess.Popen[bytes]] = []
        self.failures: dict[str, str] = {}

    def run(self, work: Iterable[list[Entry]]) -> None:
        """Send every batch, then close the workers' input; raise WorkerError on any failure."""
        feeders = []
        try:
            for part in self.parts:
                process = self._start(part)
                self.processes.append(process)
                feeder = threading.Thread(target=self._feed, args=(part, process), daemon=True)
                feeder.start()
                feeders.append(feeder)
            for batch in work:
                self._put(pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL))
            for _ in self.parts:
                self._put(None)
            for feeder in feeders:
                feeder.join()
            for process in self.processes:
                process.wait()
        except BaseException:
            for process in self.processes:
                if process.poll() is None:
                    process.kill()
                process.wait()
            self._stop(len(feeders))
            raise
        finally:
            for process in self.processes:
                if process.stdin is not None and not process.stdin.closed:
                    # a killed worker's pipe cannot take the rest of its buffer: that is no
                    # error of its own (the one that stopped the build is raised, or _check's)
                    with contextlib.suppress(BrokenPipeError):
                        process.stdin.close()
        self._check()

    def _start(self, part: Path) -> subprocess.Popen[bytes]:
        """Start the worker of one part, its stdout and stderr to the part's log."""
        with open(part / WORKER_LOG, "wb") as out:
            return subprocess.Popen(
                worker_command(part), stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT
            )

    def _feed(self, part: Path, process: subprocess.Popen[bytes]) -> None:
        """Feeding thread: send the setup, then batches until the stop marker or a failure."""
        assert process.stdin is not None
        try:
            write_frame(process.stdin, self.setup)
            while (item := self.work.get()) is not None:
                write_frame(process.stdin, item)
            process.stdin.close()
        except OSError as exc:
            self.failures[str(part)] = f"{type(exc).__name__}: {exc}"

    def _stop(self, feeders: int) -> None:
        """Let waiting feeding threads end: drop the queued batches, queue a stop for each."""
        while True:
            try:
                self.work.get_nowait()
            except queue.Empty:
                break
        for _ in range(feeders):
            self.work.put_nowait(None)

    def _put(self, item: bytes | None) -> None:
        """Queue an item; raise WorkerError as soon as a worker failed."""
        while True:
            if self.failures or any(p.poll() not in (None, 0) for p in self.processes):
                self._check()
            with contextlib.suppress(queue.Full):
                self.work.put(item, timeout=0.5)
                return

    def _check(self) -> None:
        """Raise WorkerError naming the first failed part and the end of its log."""
        for part, process in zip(self.parts, self.processes, strict=False):
            code = process.poll()
            if code in (None, 0) and str(part) not in self.failures:
                continue
            if code is None:
                try:  # its input broke: it is exiting, or stuck
                    code = process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    process.kill()
                    code = process.wait()
            output = (part / WORKER_LOG).read_text(errors="replace").rstrip()
            log.error("the worker writing index part %s failed; its log:\n%s", part, output)
            feeding = self.failures.get(str(part))
            raise WorkerError(
                f"writing index part {part} failed: its worker {exit_status(code)}"
                + (f" (sending it work: {feeding})" if feeding else "")
                + f"; the end of its log: {last_lines(output)}"
            )


def exit_status(code: int) -> str:
    """How a process with return code `code` ended, in words."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"was killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")


def last_lines(output: str, lines: int = LOG_LINES, chars: int = LOG_CHARS) -> str:
    """The last `lines` lines of `output` (at most `chars` characters), or that it is empty."""
    if not output:
        return "(empty)"
    return "\n".join(output.splitlines()[-lines:])[-chars:]


def write_frame(out: IO[bytes], payload: bytes) -> None:
    """Write one length-prefixed frame."""
    out.write(len(payload).to_bytes(8, "little"))
    out.write(payload)
    out.flush()


def read_frames(source: IO[bytes]) -> Iterator[bytes]:
    """The frames of `source` until its end."""
    while header := source.read(8):
        yield source.read(int.from_bytes(header, "little"))
