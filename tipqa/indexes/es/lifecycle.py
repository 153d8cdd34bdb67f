"""What the Elasticsearch token and vector indexes share: creation, build and serving settings,
the ledger of built parts and the completion marker.

A build may be split into named parts (one per corpus file, one Luigi task each, many workers
in parallel). `start_build` creates the index (or puts an existing one into build mode: no
replicas, no refresh) once, before the first part; workers then only add to it. Each finished
part is recorded as a document `part:<name>` in the small index `<index>-tipqa-meta` (a
ledger written as `shard:<name>` is read too);
`finalize`, once after the last part, checks that every expected part is recorded, restores
the serving settings, refreshes (and optionally force-merges), and writes the completion marker
`complete` with the document count. `is_complete` is true only
while the marker exists and the index still holds that many documents, so a finished index is
never rebuilt and a deleted or damaged one is. Every record carries the index's UUID, so the
records of a deleted index never mark parts of a new index of the same name as done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tqdm import tqdm

from tipqa.core.errors import ConfigError, TipqaError
from tipqa.core.extras import ELASTICSEARCH, Extra
from tipqa.core.settings import Settings, knob
from tipqa.indexes.es import mappings
from tipqa.indexes.es.bulk import BulkReport, run_bulk
from tipqa.indexes.es.client import (
    EsConnection,
    body,
    error_type,
    import_elasticsearch,
    make_client,
)

log = logging.getLogger(__name__)

LEDGER_SUFFIX = "-tipqa-meta"
COMPLETE_ID = "complete"
LEDGER_PREFIXES = ("part", "shard")
"""The ledger ids of a finished part, `<prefix>:<part>`: written with the first, read with any
(`shard` in ledgers written before parts were called parts)."""
FORCE_MERGE_POLL = "60s"


@dataclass(frozen=True)
class EsBuildSettings(Settings):
    """What both Elasticsearch indexes share: how a build loads the cluster (all knobs)."""

    replicas: int | None = knob(None, doc="replicas once built (None: the cluster's default)")
    bulk_chunk_docs: int = knob(500, doc="documents per bulk request")
    bulk_max_bytes: int = knob(50_000_000, doc="bytes per bulk request")
    threads: int = knob(4, doc="parallel bulk requests")
    max_retries: int = knob(8, doc="retries of bulk items rejected with 429")
    initial_backoff: float = knob(1.0, doc="seconds before the first retry")
    force_merge_segments: int | None = knob(None, doc="merge to this many segments once built")

    def extras(self) -> tuple[Extra, ...]:
        """The `elasticsearch` client."""
        return (ELASTICSEARCH,)

    def __post_init__(self) -> None:
        super().__post_init__()
        if min(self.bulk_chunk_docs, self.bulk_max_bytes, self.threads) < 1:
            raise ConfigError("bulk_chunk_docs, bulk_max_bytes and threads must be >= 1")
        if self.force_merge_segments is not None and self.force_merge_segments < 1:
            raise ConfigError(f"force_merge_segments must be >= 1, got {self.force_merge_segments}")
        mappings.serving_settings(self.replicas)


class IncompleteBuild(TipqaError):
    """`finalize` was asked for parts that are not recorded as done."""


class EsIndexBase:
    """Client, settings life cycle and ledger of built parts of one Elasticsearch index."""

    def __init__(
        self,
        index: str,
        shards: int,
        settings: EsBuildSettings,
        connection: EsConnection | None,
        build: str,
        client: Any | None,
    ) -> None:
        if not index or index != index.lower() or index.startswith(("_", "-", "+")):
            raise ConfigError(
                f"invalid Elasticsearch index name {index!r} (lower case, no _-+ start)"
            )
        self._es = import_elasticsearch()
        self.index = index
        self.shards = shards
        self.settings = settings
        self.build_fingerprint = build
        self.ledger_index = index + LEDGER_SUFFIX
        self.client = client or make_client(connection, connections=settings.threads + 2)

    def _bulk(self, actions: Iterable[dict[str, Any]], progress: tqdm | None = None) -> BulkReport:
        """Index `actions` with the build settings' threads, request sizes and retries."""
        settings = self.settings
        return run_bulk(
            self.client,
            actions,
            threads=settings.threads,
            chunk_docs=settings.bulk_chunk_docs,
            max_bytes=settings.bulk_max_bytes,
            max_retries=settings.max_retries,
            initial_backoff=settings.initial_backoff,
            progress=progress,
        )

    def _creation_body(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Settings and mappings of a new index (defined by each index kind)."""
        raise NotImplementedError

    def _expected_meta(self) -> dict[str, Any]:
        """The `_meta.tipqa` an existing index must carry (defined by each index kind)."""
        raise NotImplementedError

    def exists(self) -> bool:
        """True when the index exists in the cluster."""
        return bool(self.client.indices.exists(index=self.index))

    def _meta(self) -> dict[str, Any]:
        """`_meta.tipqa` of this index: its kind's and the fingerprint of the build it holds."""
        return {**self._expected_meta(), "build": self.build_fingerprint}

    def _check_meta(self) -> None:
        """Raise ConfigError when the existing index was made by other code or settings."""
        mapping = body(self.client.indices.get_mapping(index=self.index))
        index_mapping: dict[str, Any] = next(iter(mapping.values()), {})
        found = index_mapping.get("mappings", {}).get("_meta", {}).get("tipqa")
        if found != self._meta():
            raise ConfigError(
                f"Elasticsearch index {self.index!r} has _meta.tipqa={found!r}, expected "
                f"{self._meta()!r}: it was built with other settings or inputs; delete it "
                "(and its -tipqa-meta ledger) or use another index name"
            )

    def _ensure_index(self) -> bool:
        """Create the index in build mode if missing; True if this call created it."""
        if not self.exists():
            settings, mapping = self._creation_body()
            mapping = {**mapping, "_meta": {"tipqa": self._meta()}}
            try:
                self.client.indices.create(index=self.index, settings=settings, mappings=mapping)
            except self._es.BadRequestError as exc:
                if error_type(exc) != "resource_already_exists_exception":
                    raise
            else:
                log.info("created Elasticsearch index %s", self.index)
                return True
        self._check_meta()
        return False

    def start_build(self) -> None:
        """Create the index in build mode, or put an existing one into build mode (once per
        build, before the first part: workers adding parts never change settings)."""
        if not self._ensure_index():
            self.client.indices.put_settings(index=self.index, settings=mappings.build_settings())

    def _serve(self) -> None:
        """Restore the serving settings and refresh, so that everything indexed is searchable."""
        self.client.indices.put_settings(
            index=self.index, settings=mappings.serving_settings(self.settings.replicas)
        )
        self.client.indices.refresh(index=self.index)

    def _force_merge(self) -> None:
        """Merge to `force_merge_segments` segments per shard, waiting on the task."""
        segments = self.settings.force_merge_segments
        if segments is None:
            return
        started = self.client.indices.forcemerge(
            index=self.index,
            max_num_segments=segments,
            wait_for_completion=False,
        )
        task = body(started)["task"]
        while True:
            try:
                status = body(
                    self.client.tasks.get(
                        task_id=task, wait_for_completion=True, timeout=FORCE_MERGE_POLL
                    )
                )
            except self._es.ApiError as exc:
                if exc.status_code != 408:
                    raise
                status = {}
            if status.get("completed"):
                break
            log.info("force merge of %s still running", self.index)
        if status.get("error"):
            raise TipqaError(f"force merge of {self.index!r} failed: {status['error']}")

    def _ensure_ledger(self) -> None:
        """Create the ledger index if missing."""
        if self.client.indices.exists(index=self.ledger_index):
            return
        try:
            self.client.indices.create(
                index=self.ledger_index,
                settings={"index": {"number_of_shards": 1, "auto_expand_replicas": "0-1"}},
                mappings=mappings.ledger_mappings(),
            )
        except self._es.BadRequestError as exc:
            if error_type(exc) != "resource_already_exists_exception":
                raise

    def _ledger_get(self, doc_id: str) -> dict[str, Any] | None:
        """A ledger document, or None when it (or the ledger) does not exist."""
        try:
            found = self.client.get(index=self.ledger_index, id=doc_id)
        except self._es.NotFoundError:
            return None
        return dict(body(found)["_source"])

    def _index_uuid(self) -> str | None:
        """The UUID Elasticsearch gave the index when it was created, or None if it is missing."""
        try:
            settings = body(self.client.indices.get_settings(index=self.index, name="index.uuid"))
        except self._es.NotFoundError:
            return None
        return str(next(iter(settings.values()))["settings"]["index"]["uuid"])

    def _ledger_put(self, doc_id: str, record: dict[str, Any]) -> None:
        """Write a ledger document for the current index, visible to searches at once."""
        self._ensure_ledger()
        record = {
            **record,
            "index_uuid": self._index_uuid(),
            "written_at": datetime.now(UTC).isoformat(),
        }
        self.client.index(index=self.ledger_index, id=doc_id, document=record, refresh=True)

    def _current_record(self, doc_id: str) -> dict[str, Any] | None:
        """A ledger document written for the index as it exists now, or None."""
        uuid = self._index_uuid()
        if uuid is None:
            return None
        record = self._ledger_get(doc_id)
        if record is None or record.get("index_uuid") != uuid:
            return None
        return record

    def part_record(self, part: str) -> dict[str, Any] | None:
        """The counts recorded when `part` finished, or None if it has not."""
        for prefix in LEDGER_PREFIXES:
            record = self._current_record(f"{prefix}:{part}")
            if record is not None:
                return dict(record.get("counts", {}))
        return None

    def part_done(self, part: str) -> bool:
        """True when `part` has been indexed completely."""
        return self.part_record(part) is not None

    def record_part(self, part: str, counts: dict[str, float]) -> None:
        """Record that `part` has been indexed completely, with its counts."""
        self._ledger_put(f"part:{part}", {"kind": "part", "part": part, "counts": counts})

    def completion(self) -> dict[str, Any] | None:
        """The completion marker, or None when the index is not marked complete."""
        return self._current_record(COMPLETE_ID)

    def missing_index(self) -> ConfigError:
        """The error for an operation on an index that does not exist."""
        return ConfigError(f"Elasticsearch index {self.index!r} does not exist (build it first)")

    def count(self) -> int:
        """Number of documents in the index (as of the last refresh)."""
        try:
            return int(body(self.client.count(index=self.index))["count"])
        except self._es.NotFoundError as exc:
            raise self.missing_index() from exc

    def is_complete(self) -> bool:
        """True when the index is marked complete and holds the marked number of documents."""
        marker = self.completion()
        return marker is not None and self.count() == int(marker["documents"])

    def finalize(self, parts: Sequence[str] = ()) -> dict[str, float]:
        """Check that `parts` are done, serve, refresh, optionally merge, mark complete."""
        missing = [s for s in parts if not self.part_done(s)]
        if missing:
            raise IncompleteBuild(
                f"index {self.index!r}: parts not indexed yet: {', '.join(missing[:20])}"
                + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
            )
        started = time.perf_counter()
        self._ensure_index()
        self._serve()
        self._force_merge()
        documents = self.count()
        counts: dict[str, float] = {
            "documents": documents,
            "parts": len(parts),
            "finalize_seconds": round(time.perf_counter() - started, 3),
        }
        self._ledger_put(
            COMPLETE_ID, {"kind": "complete", "documents": documents, "parts": list(parts)}
        )
        return counts
