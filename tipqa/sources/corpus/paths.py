"""Expanding file arguments (paths, directories, glob patterns) into a sorted list of files."""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from tipqa.core.errors import InputError

GLOB_CHARACTERS = frozenset("*?[")


def expand_paths(
    patterns: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    accept: Callable[[Path], bool] | None = None,
) -> list[Path]:
    """Files named by `patterns`, in argument order, each pattern's matches sorted.

    A pattern is a file, a directory (its files that `accept` allows, recursively) or a glob
    (`**` allowed). A pattern that matches no file is an InputError; a file named twice is
    kept once, at its first place.
    """
    return [path for path, _ in expand_rooted(patterns, accept=accept)]


def expand_rooted(
    patterns: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    accept: Callable[[Path], bool] | None = None,
) -> list[tuple[Path, Path]]:
    """`expand_paths` with each file's root: the folder its pattern names or starts from.

    The root of a directory is itself; of a glob, the folder before its first wildcard; of a
    file, its parent. A file's path below its root names it the same wherever the corpus lies.
    """
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    if not patterns:
        raise InputError("no input files given")
    files: list[tuple[Path, Path]] = []
    seen: set[Path] = set()
    for pattern in patterns:
        root = _root(str(pattern))
        for path in _expand_one(str(pattern), accept):
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                files.append((path, root))
    return files


def _root(pattern: str) -> Path:
    """The folder a pattern names or starts from (see `expand_rooted`)."""
    path = Path(pattern)
    if GLOB_CHARACTERS & set(pattern):
        fixed = list(itertools.takewhile(_literal, path.parts))
        return Path(*fixed) if fixed else Path(".")
    return path if path.is_dir() else path.parent


def _literal(part: str) -> bool:
    return not GLOB_CHARACTERS & set(part)


def _expand_one(pattern: str, accept: Callable[[Path], bool] | None) -> list[Path]:
    """The sorted files of one pattern."""
    if GLOB_CHARACTERS & set(pattern):
        matches = [Path(p) for p in glob.glob(pattern, recursive=True)]
        files = sorted(p for p in matches if p.is_file())
        if not files:
            raise InputError("the pattern matches no file", path=pattern)
        return files
    path = Path(pattern)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and (accept is None or accept(p)))
        if not files:
            raise InputError("the directory holds no readable file", path=pattern)
        return files
    if not path.is_file():
        raise InputError("no such file", path=pattern)
    return [path]
