"""Scratch files and folders beside an output, moved into place when complete.

They are made with the ordinary modes (0666 for a file, 0777 for a folder) less the process's
umask, as `open` and `mkdir` make them, so an output moved into place can be read by whoever
can read the rest of its folder. (`tempfile.mkstemp` and `mkdtemp` make them 0600 and 0700.)
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

ATTEMPTS = 100


def _name(prefix: str, suffix: str) -> str:
    return f"{prefix}{secrets.token_hex(6)}{suffix}"


def scratch_file(folder: Path, prefix: str, suffix: str = "") -> tuple[int, Path]:
    """A new file in `folder`, with the umask's mode: its open descriptor and its path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(ATTEMPTS):
        path = folder / _name(prefix, suffix)
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free scratch name {prefix}…{suffix} in {folder}")


def scratch_folder(folder: Path, prefix: str) -> Path:
    """A new empty folder in `folder`, with the umask's mode."""
    for _ in range(ATTEMPTS):
        path = folder / _name(prefix, "")
        try:
            path.mkdir(mode=0o777)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free scratch name {prefix}… in {folder}")


def current_umask() -> int:
    """The process's umask (read from /proc where it can be, without changing it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def follow_umask(folder: Path) -> None:
    """Give the files under `folder` that a library wrote 0600 (as tantivy writes its
    `meta.json`) the mode the umask gives; folders likewise."""
    mask = current_umask()
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        mode = (0o777 if path.is_dir() else 0o666) & ~mask
        if path.stat().st_mode & 0o777 != mode:
            path.chmod(mode)
