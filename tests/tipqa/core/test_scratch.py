"""Scratch files and folders, and so every atomically written output, follow the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tipqa.core.jsonl import atomic_open, write_json, write_records
from tipqa.core.records import Document
from tipqa.core.scratch import current_umask, follow_umask, scratch_file, scratch_folder


@pytest.fixture(params=[0o022, 0o002], ids=["umask022", "umask002"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under a umask, restoring the old one after."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    write_json(tmp_path / "stats.json", {"a": 1})
    write_records(tmp_path / "records.jsonl", [Document("d1", "text", {})])
    with atomic_open(tmp_path / "report.md") as handle:
        handle.write(b"# report\n")
    for name in ("stats.json", "records.jsonl", "report.md"):
        assert mode(tmp_path / name) == 0o666 & ~umask, name
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["records.jsonl", "report.md", "stats.json"]


def test_scratch_files_and_folders_are_new_and_follow_the_umask(tmp_path: Path, umask: int) -> None:
    first, second = scratch_folder(tmp_path, ".index."), scratch_folder(tmp_path, ".index.")
    assert first != second and first.parent == tmp_path and first.name.startswith(".index.")
    assert mode(first) == 0o777 & ~umask
    fd, path = scratch_file(tmp_path, ".out.", ".tmp")
    os.close(fd)
    assert path.name.startswith(".out.") and path.name.endswith(".tmp")
    assert mode(path) == 0o666 & ~umask


def test_follow_umask_opens_what_a_library_wrote_private(tmp_path: Path, umask: int) -> None:
    assert current_umask() == umask
    (tmp_path / "index" / "part").mkdir(parents=True)
    private = tmp_path / "index" / "part" / "meta.json"
    private.write_text("{}")
    private.chmod(0o600)
    (tmp_path / "index").chmod(0o700)
    follow_umask(tmp_path / "index")
    assert mode(private) == 0o666 & ~umask
    assert mode(tmp_path / "index") == 0o777 & ~umask
