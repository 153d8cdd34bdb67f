"""What a Hub-ready folder holds, as the folder's writer reports it and the card shows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HubFolderStats:
    """What the folder holds: rows per configuration and split, and the files."""

    rows: dict[str, dict[str, int]]
    files: dict[str, dict[str, list[str]]]
