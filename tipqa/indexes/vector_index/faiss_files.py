"""FAISS on disk: importing it, an index folder's manifest (checked on opening), and FAISS
files written atomically (see `tipqa.indexes.vector_index.faiss` for the folder's layout)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import atomic_open, read_json

FORMAT = "tipqa-faiss"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
REQUIRED = (("faiss_file", str), ("count", int), ("generation", int))
BLAS_THRESHOLD = 20


def import_faiss() -> Any:
    """Import faiss (a core dependency, imported lazily because it is heavy)."""
    import faiss

    faiss.cvar.distance_compute_blas_threshold = BLAS_THRESHOLD
    return faiss


def read_manifest(path: Path, expected: dict[str, Any]) -> dict[str, Any] | None:
    """The manifest of a finished index, or None if there is none; a manifest that is not
    one, or that was built with other `expected` parameters, is an error."""
    if not path.exists():
        return None
    manifest = read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError("not a tipqa faiss index manifest", path=str(path))
    if manifest.get("version") != FORMAT_VERSION:
        raise InputError(
            f"index format version {manifest.get('version')}, expected {FORMAT_VERSION}",
            path=str(path),
            field="version",
        )
    for name, kind in REQUIRED:
        if not isinstance(manifest.get(name), kind):
            raise InputError(f"missing or not {kind.__name__}", path=str(path), field=name)
    for name, value in expected.items():
        if manifest.get(name) != value:
            raise ConfigError(
                f"{path}: the index was built with {name}={manifest.get(name)!r}, "
                f"opened with {name}={value!r}"
            )
    return manifest


def load_faiss(path: Path, count: int, dimension: int) -> Any:
    """Read a FAISS file named by a manifest and check its size against it."""
    if not path.is_file():
        raise InputError("the faiss file named by the manifest is missing", path=str(path))
    index = import_faiss().read_index(str(path))
    if index.ntotal != count or index.d != dimension:
        raise InputError(
            f"holds {index.ntotal} vectors of dimension {index.d}, "
            f"the manifest says {count} of {dimension}",
            path=str(path),
        )
    return index


def write_faiss(index: Any, target: Path) -> None:
    """Write a FAISS index atomically (a temporary file, flushed to disk, then renamed)."""
    faiss = import_faiss()
    with atomic_open(target) as handle:
        faiss.write_index(index, faiss.PyCallbackIOWriter(handle.write))
