"""Fingerprints: what a step's output was made from, chained through the steps it read.

A step's fingerprint hashes its name, the schema version, the identity of the settings that
decide its output (`Settings.identity()`) and the fingerprints of its inputs: other steps'
fingerprints, or raw inputs (a file by path, size and modification time, or by content where
that is cheap). A step records its fingerprint in its stats file; it is complete only when the
recorded one equals the one the current settings give, so a changed setting redoes exactly the
steps it decides and those downstream of them.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import orjson

from tipqa.core.records import SCHEMA_VERSION
from tipqa.core.settings import plain

_HEX_CHARS = 32
_READ_BYTES = 1 << 20


def fingerprint(step: str, *parts: Any) -> str:
    """The fingerprint of step `step` made from `parts` (settings, input fingerprints, files)."""
    payload = {"step": step, "schema_version": SCHEMA_VERSION, "parts": plain(list(parts))}
    encoded = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(encoded).hexdigest()[:_HEX_CHARS]


def file_stat(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A file's identity without reading it: absolute path, size and modification time."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return {"path": str(resolved), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def files_stat(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """`file_stat` of every file, in the given order."""
    return [file_stat(path) for path in paths]


def folder_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The files under `folder`, sorted; hidden ones, and those in hidden folders, left out."""
    root = Path(folder)
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not any(p.startswith(".") for p in path.relative_to(root).parts)
    )


def content_hash(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's content, computed once per process for each version of the file."""
    stat = file_stat(path)
    return _content_hash(stat["path"], stat["size"], stat["mtime_ns"])


@functools.lru_cache(maxsize=4096)
def _content_hash(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class StepRecord:
    """One step's settings and inputs; its fingerprint is their hash."""

    step: str
    settings: dict[str, Any]
    inputs: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def fingerprint(self) -> str:
        """The fingerprint of the step's output."""
        return fingerprint(self.step, self.settings, self.inputs)

    def provenance(self) -> dict[str, Any]:
        """What the step's stats file records of how it was made."""
        return {"fingerprint": self.fingerprint, "settings": self.settings, "inputs": self.inputs}


@dataclass(frozen=True)
class StepInputs:
    """What one step reads, declared once: its settings and its upstream fingerprints.

    The plan builds one such frozen record per step; the step function receives it and reads
    its settings from it, and its `record` (so its fingerprint) is made from the same fields.
    """

    step: ClassVar[str] = ""

    def settings(self) -> dict[str, Any]:
        """The identities of the settings that decide the step's output."""
        return {}

    def upstream(self) -> dict[str, Any]:
        """The fingerprints of what the step reads (other steps, raw inputs)."""
        return {}

    @functools.cached_property
    def record(self) -> StepRecord:
        """The step's record: its fingerprint and provenance."""
        return StepRecord(self.step, self.settings(), self.upstream())

    @property
    def fingerprint(self) -> str:
        """The step's fingerprint (its record's)."""
        return self.record.fingerprint
