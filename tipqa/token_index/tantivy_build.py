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
import os
import pickle
import queue
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

from tipqa.errors import InputError, TipqaError
from tipqa.records import Document
from tipqa.token_index import tantivy_schema as fields
from tipqa.token_index.tantivy_analysis import Tokenization, analyse, analyzer

MAX_ID_BYTES = 65_000  # tantivy silently skips terms longer than about 65,530 bytes
MIN_HEAP_MB_PER_WRITER = 15  # tantivy's own lower bound for a writer thread's arena
BATCH_DOCS = 1000
BATCH_CHARS = 4_000_000
WORKER_LOG = "worker.log"
LEDGER = "part-ledger.bin"  # per part: (id hash, row, body bytes, id bytes) per document, int64
PART_IDS = "part-ids.bin"  # per part: the ids' UTF-8 bytes, in the ledger's order

Entry = tuple[int, str, str, bytes | None]  # row, doc_id, text, meta as JSON (or None)


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


class _Pool:
    """Worker processes (`python -m tipqa.token_index.tantivy_worker`) that write the parts.

    Batches go from one bounded queue to the workers through one feeding thread per worker,
    which writes them to the worker's stdin as length-prefixed pickles: whichever worker is
    free takes the next batch. The workers are started as fresh interpreters (not forked, and
    without re-running the caller's main module).
    """

    def __init__(self, parts: list[Path], heap_bytes: int, mode: Tokenization) -> None:
        self.parts = parts
        self.setup = (heap_bytes, mode.kind, mode.blank)
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
        """Start the worker of one part, its stderr to the part's log, and send its setup."""
        with open(part / WORKER_LOG, "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "tipqa.token_index.tantivy_worker", str(part)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        assert process.stdin is not None
        write_frame(process.stdin, pickle.dumps(self.setup))
        return process

    def _feed(self, part: Path, process: subprocess.Popen[bytes]) -> None:
        """Feeding thread: write batches to one worker until the stop marker or a failure."""
        assert process.stdin is not None
        try:
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
        """Queue an item, raising WorkerError while the queue is full and a worker failed."""
        while True:
            try:
                self.work.put(item, timeout=0.5)
                return
            except queue.Full:
                if self.failures or any(p.poll() not in (None, 0) for p in self.processes):
                    self._check()

    def _check(self) -> None:
        """Raise WorkerError naming the first failed part and the end of its log."""
        for part, process in zip(self.parts, self.processes, strict=False):
            code = process.poll()
            if code not in (None, 0) or str(part) in self.failures:
                if code is None:
                    process.kill()
                    code = process.wait()
                log = (part / WORKER_LOG).read_text(errors="replace")[-2000:]
                raise WorkerError(
                    f"writing index part {part} failed (exit code {code}; "
                    f"{self.failures.get(str(part), 'no feeding error')}): {log}"
                )


def write_frame(out: IO[bytes], payload: bytes) -> None:
    """Write one length-prefixed frame."""
    out.write(len(payload).to_bytes(8, "little"))
    out.write(payload)
    out.flush()


def read_frames(source: IO[bytes]) -> Iterator[bytes]:
    """The frames of `source` until its end."""
    while header := source.read(8):
        yield source.read(int.from_bytes(header, "little"))
