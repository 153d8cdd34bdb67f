"""Counters that every step keeps and writes next to its output."""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import orjson

from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_json, write_json
from tipqa.core.records import SCHEMA_VERSION, Judgment


@dataclass
class StepStats:
    """What one step (or shard of it) did: counts by name, errors by kind, seconds.

    `provenance` (a `tipqa.core.fingerprint.StepRecord`'s) says how the output was made: the
    fingerprint that marks the step complete, the settings it ran with and the fingerprints of
    its inputs.
    """

    step: str
    counts: dict[str, float] = field(default_factory=lambda: defaultdict[str, float](int))
    errors: Counter[str] = field(default_factory=Counter)
    info: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] | None = None
    started: float = field(default_factory=time.perf_counter)

    def add(self, name: str, amount: int | float = 1) -> None:
        """Increase the counter `name`."""
        self.counts[name] += amount

    def set_total(self, name: str, value: int | float) -> None:
        """Set the counter `name` to a running total that supersedes its earlier value."""
        self.counts[name] = value

    def error(self, kind: str, amount: int = 1) -> None:
        """Count an error (or a skipped input) of `kind`."""
        self.errors[kind] += amount

    def judgment_failed(self, result: Judgment) -> None:
        """Count a judgment without a verdict by the kind of its error: `judgment_<kind>`, or
        `confirmation_<kind>` where the confirming judge's answer failed."""
        if result.label is None:
            self.error(f"judgment_{_kind(result.error)}")
        elif result.confirmation is not None and result.confirmation.label is None:
            self.error(f"confirmation_{_kind(result.confirmation.error)}")

    def merge(self, other: StepStats, prefix: str = "") -> None:
        """Add another stats object's counts (names prefixed by `prefix`) and errors."""
        for name, value in other.counts.items():
            self.add(prefix + name, value)
        self.errors.update(other.errors)

    def merge_counted(self, component: object, prefix: str = "") -> None:
        """Fold in what a component counts (`Counted`: calls, tokens, cache hits, and its
        errors), its counters named `<prefix><its class>.<counter>`; nothing if it counts none."""
        if isinstance(component, Counted):
            self.merge(component.stats, prefix=f"{prefix}{type(component).__name__}.")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to the stats file."""
        provenance = self.provenance or {}
        return {
            "step": self.step,
            "schema_version": SCHEMA_VERSION,
            "fingerprint": provenance.get("fingerprint"),
            "provenance": provenance,
            "counts": dict(sorted(self.counts.items())),
            "errors": dict(sorted(self.errors.items())),
            "info": self.info,
            "seconds": round(time.perf_counter() - self.started, 3),
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the stats file atomically."""
        write_json(path, self.to_dict())


def _kind(error: str | None) -> str:
    """The kind of an error message (`connection` of `connection: refused`)."""
    return (error or "failed").split(":")[0]


def read_stats(path: str | os.PathLike[str], remedy: str) -> dict[str, Any]:
    """A step's stats file, checked to be written by this schema version.

    `remedy` says what to do about an incompatible one (which folder to delete, which command
    to rerun); it ends the error message.
    """
    if not Path(path).is_file():
        raise InputError(
            f"no stats file: the step that writes it has not finished; {remedy}", path=str(path)
        )
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("not a stats file", path=str(path))
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(
            f"written with record schema version {version!r}; this tipqa reads version "
            f"{SCHEMA_VERSION}: {remedy}",
            path=str(path),
        )
    return data


def recorded_fingerprint(path: str | os.PathLike[str]) -> str | None:
    """The fingerprint a step's stats file records, or None (no file, unreadable, other schema)."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        return None
    value = data.get("fingerprint")
    return value if isinstance(value, str) else None


@runtime_checkable
class Counted(Protocol):
    """A component that counts what it did (calls, tokens, cache hits) for the step's stats."""

    @property
    def stats(self) -> StepStats:
        """The component's counters."""
        ...
