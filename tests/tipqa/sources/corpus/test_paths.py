"""Tests of file-argument expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.core.errors import InputError
from tipqa.sources.corpus.paths import expand_paths
from tipqa.sources.corpus.streams import is_supported


def make(tmp_path: Path, *names: str) -> None:
    """Create empty files under tmp_path."""
    for name in names:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


def test_patterns_in_argument_order_each_sorted_without_repeats(tmp_path: Path) -> None:
    make(tmp_path, "b/2.jsonl", "b/1.jsonl", "a/9.jsonl.gz", "a/skip.txt")
    files = expand_paths(
        [str(tmp_path / "b" / "*.jsonl"), tmp_path / "a", str(tmp_path / "b" / "1.jsonl")],
        accept=is_supported,
    )
    assert [p.relative_to(tmp_path).as_posix() for p in files] == [
        "b/1.jsonl",
        "b/2.jsonl",
        "a/9.jsonl.gz",
    ]


def test_recursive_glob(tmp_path: Path) -> None:
    make(tmp_path, "x/y/z.parquet", "x/w.parquet")
    files = expand_paths(str(tmp_path / "**" / "*.parquet"))
    assert [p.name for p in files] == ["w.parquet", "z.parquet"]


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ([], "no input files"),
        ("nothing-*.jsonl", "matches no file"),
        ("absent.jsonl", "no such file"),
    ],
)
def test_errors(
    tmp_path: Path, argument: object, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=message):
        expand_paths(argument)  # type: ignore[arg-type]


def test_directory_without_readable_files(tmp_path: Path) -> None:
    make(tmp_path, "notes.txt")
    with pytest.raises(InputError, match="holds no readable file"):
        expand_paths(tmp_path, accept=is_supported)
