"""Parallel bulk indexing with bounded memory, retries on rejections, and a report.

`run_bulk` starts `threads` workers that each run `elasticsearch.helpers.streaming_bulk` over
their own bounded queue of actions, which the caller's thread fills from the input: every
worker holds at most a queue and a chunk (`chunk_docs` actions, `max_bytes` bytes), so memory
does not grow with the input, and a slow cluster blocks the reading of the input. Documents
rejected with 429 (or 502/503/504) are retried with exponential backoff (`initial_backoff`
doubling up to `max_backoff`), which is the backpressure: a busy cluster slows the workers.
A request that fails as a whole after the transport's own retries raises in the caller and
stops the other workers. The per-document outcome is counted in a `BulkReport`.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from tipqa.core.errors import ConfigError, TipqaError
from tipqa.indexes.es.client import import_elasticsearch

log = logging.getLogger(__name__)

RETRY_STATUSES = (429, 502, 503, 504)
MAX_EXAMPLES = 10


class BulkFailure(TipqaError):
    """Documents could not be indexed for a transient reason even after the retries."""


@dataclass
class BulkReport:
    """What happened to each action of a bulk run."""

    created: int = 0
    updated: int = 0
    conflicts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    transient: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    @property
    def done(self) -> int:
        """Actions that succeeded or found their document already present."""
        return self.created + self.updated + self.conflicts

    def record(self, ok: bool, item: dict[str, Any]) -> None:
        """Count one item as yielded by `streaming_bulk`."""
        _op, info = next(iter(item.items()))
        if ok:
            if info.get("result") == "updated":
                self.updated += 1
            else:
                self.created += 1
            return
        status = int(info.get("status") or 0)
        kind = _error_kind(info)
        if status == 409:
            self.conflicts += 1
            return
        if status in RETRY_STATUSES or status >= 500 or status == 0:
            self.transient[kind] += 1
        else:
            self.rejected[kind] += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(f"id {info.get('_id')!r}: status {status} {kind}: {_reason(info)}")

    def raise_for_transient(self, what: str) -> None:
        """Raise BulkFailure when documents were left out for a transient reason."""
        if self.transient:
            total = sum(self.transient.values())
            kinds = ", ".join(f"{k} x{n}" for k, n in sorted(self.transient.items()))
            raise BulkFailure(
                f"{what}: {total} documents were not indexed after the retries ({kinds}); "
                f"rerun to index them (indexing is idempotent). First: {self.examples[:3]}"
            )


def _error_kind(info: dict[str, Any]) -> str:
    """The error type of a failed bulk item."""
    error = info.get("error")
    if isinstance(error, dict):
        return str(error.get("type", "unknown"))
    if info.get("exception") is not None:
        return type(info["exception"]).__name__
    return "unknown"


def _reason(info: dict[str, Any]) -> str:
    """A short reason of a failed bulk item."""
    error = info.get("error")
    reason = error.get("reason", "") if isinstance(error, dict) else str(error or "")
    return str(reason)[:300]


_DONE = object()
POLL_SECONDS = 0.1


class _Lane:
    """One worker's bounded queue of actions; iterating it ends at _DONE or when stopped."""

    def __init__(self, size: int, stopped: threading.Event) -> None:
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=size)
        self.stopped = stopped

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while not self.stopped.is_set():
            try:
                item = self.queue.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if item is _DONE:
                return
            yield item

    def put(self, item: Any, worker: Future[None]) -> bool:
        """Queue `item` unless the run stopped or the worker ended; False if not queued."""
        while not self.stopped.is_set() and not worker.done():
            try:
                self.queue.put(item, timeout=POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False


def run_bulk(
    client: Any,
    actions: Iterable[dict[str, Any]],
    *,
    threads: int = 4,
    chunk_docs: int = 500,
    max_bytes: int = 50_000_000,
    max_retries: int = 8,
    initial_backoff: float = 1.0,
    max_backoff: float = 60.0,
    progress: tqdm | None = None,
) -> BulkReport:
    """Send `actions` (dicts for `streaming_bulk`) with `threads` parallel workers.

    Each action goes to the worker chosen by its `_id`, so all actions for one id are sent
    by one worker, in input order: with `create` actions the first one wins, as in a
    sequential build.
    """
    if threads < 1 or chunk_docs < 1 or max_bytes < 1 or max_retries < 0:
        raise ConfigError("bulk: threads, chunk_docs and max_bytes must be >= 1, retries >= 0")
    import_elasticsearch()
    from elasticsearch import helpers

    stopped = threading.Event()
    lanes = [_Lane(chunk_docs, stopped) for _ in range(threads)]
    report = BulkReport()
    lock = threading.Lock()

    def worker(lane: _Lane) -> None:
        try:
            for ok, item in helpers.streaming_bulk(
                client,
                lane,
                chunk_size=chunk_docs,
                max_chunk_bytes=max_bytes,
                raise_on_error=False,
                raise_on_exception=True,
                max_retries=max_retries,
                initial_backoff=initial_backoff,
                max_backoff=max_backoff,
                retry_on_status=RETRY_STATUSES,
            ):
                with lock:
                    report.record(ok, item)
                    if progress is not None:
                        progress.update(1)
        except BaseException:
            stopped.set()
            raise

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tipqa-bulk") as pool:
        workers = [pool.submit(worker, lane) for lane in lanes]
        try:
            for action in actions:
                number = hash(action.get("_id")) % threads
                if not lanes[number].put(action, workers[number]):
                    break
        except BaseException:
            stopped.set()
            raise
        finally:
            for lane, future in zip(lanes, workers, strict=True):
                lane.put(_DONE, future)
        errors = [w.exception() for w in workers]
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    for example in report.examples:
        log.warning("bulk item failed: %s", example)
    return report
