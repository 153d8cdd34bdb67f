"""Where an index lives: a folder for the embedded backends, a cluster for Elasticsearch."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tipqa.indexes.es.client import EsConnection


@dataclass(frozen=True)
class IndexPlace:
    """The run's folder for an embedded index, the configured Elasticsearch cluster, and the
    fingerprint of the build the index holds (`build`; empty outside a pipeline).

    Every index backend is constructed with one; each uses the part that concerns it. A
    backend that stores the build's fingerprint (Elasticsearch, in the index's `_meta`)
    refuses an index made by another build.
    """

    path: Path
    elasticsearch: EsConnection = field(default_factory=EsConnection)
    build: str = ""
