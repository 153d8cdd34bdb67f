"""Counters that every stage keeps and writes next to its output."""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tipqa.jsonl import write_json
from tipqa.records import SCHEMA_VERSION


@dataclass
class StageStats:
    """What one stage (or shard of it) did: counts by name, errors by kind, seconds."""

    stage: str
    counts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    info: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    def add(self, name: str, amount: int | float = 1) -> None:
        """Increase the counter `name`."""
        self.counts[name] += amount

    def error(self, kind: str, amount: int = 1) -> None:
        """Count an error (or a skipped input) of `kind`."""
        self.errors[kind] += amount

    def merge(self, other: StageStats, prefix: str = "") -> None:
        """Add another stats object's counts (names prefixed by `prefix`) and errors."""
        self.counts.update({prefix + name: value for name, value in other.counts.items()})
        self.errors.update(other.errors)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to the stats file."""
        return {
            "stage": self.stage,
            "schema_version": SCHEMA_VERSION,
            "counts": dict(sorted(self.counts.items())),
            "errors": dict(sorted(self.errors.items())),
            "info": self.info,
            "seconds": round(time.perf_counter() - self.started, 3),
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the stats file atomically."""
        write_json(path, self.to_dict())
