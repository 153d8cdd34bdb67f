"""The anchor index of a token stream: one streaming pass, parallel over ranges, resumable.

An *anchor* is a place in a training sequence where a document, or a piece of one, starts:

* after every end-of-document (EOD) token: a document's first tokens;
* position 0 of every sequence (its *head*): the first document of the stream, a document
  that starts exactly there, or the continuation of a document cut by the sequence packing.

At each anchor the next `match_tokens` tokens are hashed (64 bits), the window ending early,
EOD included, when an EOD comes first. An EOD anchor whose window runs off the sequence's end
before `match_tokens` tokens is kept apart as *truncated*, hashed over the tokens there are:
such a document start is found through the next piece's head, and then placed among the
truncated anchors at the one position it must have (see `tipqa.training_order.locate`).

The index is independent of what is looked up in it, so the expensive pass over the stream
runs once per stream, and any set of wanted documents is then matched against the index (a
few GB for Pythia's 600 GB) and confirmed on the stream's own tokens. Each unit's result is
written atomically to `units/unit-<first>-<stop>.npz`; a rerun does only the missing units.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import atomic_open, read_json, write_json
from tipqa.core.stats import StepStats
from tipqa.training_order.streams import StreamUnit, TokenStream

HASH_VERSION = 1
_OFFSET = np.uint64(0xCBF29CE484222325)
_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)


def hash_windows(windows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """64-bit hashes of the first `lengths[i]` tokens of each row of `windows` (m, N)."""
    words = windows.astype(np.uint64, copy=False)
    hashes = np.full(windows.shape[0], _OFFSET, dtype=np.uint64)
    for column in range(windows.shape[1]):
        mixed = (hashes ^ words[:, column]) * _PRIME
        np.copyto(hashes, mixed, where=column < lengths)
    hashes ^= lengths.astype(np.uint64) * _GOLDEN
    for multiplier in (_MIX1, _MIX2):
        hashes ^= hashes >> np.uint64(33)
        hashes *= multiplier
    hashes ^= hashes >> np.uint64(33)
    return hashes


def cut_windows(
    tokens: np.ndarray, rows: np.ndarray, starts: np.ndarray, width: int, eod: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Windows of `width` tokens at (row, start) of a 2-D token array, cut after an EOD.

    Returns the windows (m, width), their lengths, and whether each is complete (it ends at
    an EOD or has `width` tokens; otherwise the row ended first).
    """
    length = tokens.shape[1]
    columns = starts[:, None] + np.arange(width)[None, :]
    inside = columns < length
    windows = tokens[rows[:, None], np.minimum(columns, length - 1)]
    available = np.minimum(length - starts, width)
    lengths, has_eod = window_lengths(windows, eod, available, inside)
    return windows, lengths, has_eod | (available == width)


def window_lengths(
    windows: np.ndarray,
    eod: int,
    available: np.ndarray | int,
    inside: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each window's length (up to and with its first EOD, else `available`), and has-EOD."""
    at_eod = windows == eod
    if inside is not None:
        at_eod &= inside
    has_eod = at_eod.any(axis=1)
    return np.where(has_eod, at_eod.argmax(axis=1) + 1, available), has_eod


@dataclass
class Anchors:
    """EOD anchors: the row (sequence within the unit), position and hash of each window."""

    rows: np.ndarray
    positions: np.ndarray
    hashes: np.ndarray


@dataclass
class UnitAnchors:
    """One unit's anchors: every sequence's head hash and batch, and its EOD anchors.

    `complete` anchors have a full window (or one ending at an EOD); `truncated` ones ran
    into the end of their sequence first and are hashed over the tokens there are.
    """

    first: int
    heads: np.ndarray
    batches: np.ndarray
    complete: Anchors
    truncated: Anchors


ARRAYS = ("rows", "positions", "hashes")


def block_anchors(tokens: np.ndarray, width: int, eod: int) -> tuple[np.ndarray, Anchors, Anchors]:
    """Head hashes, complete and truncated EOD anchors of a block (n, seq_length)."""
    count, length = tokens.shape
    zeros = np.zeros(count, dtype=np.int64)
    windows, lengths, _ = cut_windows(tokens, np.arange(count), zeros, width, eod)
    heads = hash_windows(windows, lengths)
    flat = np.flatnonzero(tokens.reshape(-1) == eod)
    rows, columns = np.divmod(flat, length)
    keep = columns < length - 1
    rows, starts = rows[keep], columns[keep] + 1
    windows, lengths, complete = cut_windows(tokens, rows, starts, width, eod)
    hashes = hash_windows(windows, lengths)
    return (
        heads,
        Anchors(rows[complete], starts[complete], hashes[complete]),
        Anchors(rows[~complete], starts[~complete], hashes[~complete]),
    )


def unit_path(folder: Path, unit: StreamUnit) -> Path:
    """Where a unit's anchors are stored."""
    return folder / "units" / f"unit-{unit.name}.npz"


def index_unit(
    stream: TokenStream, unit: StreamUnit, folder: Path, width: int, eod: int, block: int
) -> dict[str, int]:
    """Compute and store one unit's anchors; return its counts."""
    heads: list[np.ndarray] = []
    batches: list[np.ndarray] = []
    kinds: dict[str, list[Anchors]] = {"complete": [], "truncated": []}
    for piece in stream.blocks(unit, block):
        head, complete, truncated = block_anchors(piece.tokens, width, eod)
        offset = piece.first - unit.first
        heads.append(head)
        batches.append(piece.batches)
        for kind, found in (("complete", complete), ("truncated", truncated)):
            kinds[kind].append(Anchors(found.rows + offset, found.positions, found.hashes))
    position_type = np.min_scalar_type(stream.seq_length)
    arrays: dict[str, np.ndarray] = {
        "first": np.array([unit.first]),
        "heads": np.concatenate(heads),
        "batches": np.concatenate(batches).astype(np.int64),
    }
    for kind, parts in kinds.items():
        arrays[f"{kind}_rows"] = np.concatenate([a.rows for a in parts]).astype(np.uint32)
        arrays[f"{kind}_positions"] = np.concatenate([a.positions for a in parts]).astype(
            position_type
        )
        arrays[f"{kind}_hashes"] = np.concatenate([a.hashes for a in parts])
    with atomic_open(unit_path(folder, unit)) as handle:
        np.savez(handle, **arrays)  # type: ignore[arg-type]
    sequences = unit.stop - unit.first
    return {
        "sequences": sequences,
        "tokens": sequences * stream.seq_length,
        "anchors": int(arrays["complete_hashes"].size),
        "anchors_truncated": int(arrays["truncated_hashes"].size),
    }


def _index_unit_job(job: tuple[TokenStream, StreamUnit, Path, int, int, int]) -> dict[str, int]:
    return index_unit(*job)


def manifest(stream: TokenStream, width: int, eod: int, sequences_per_unit: int) -> dict[str, Any]:
    """What an anchor index depends on (the unit size names its files)."""
    return {
        "stream": stream.identity(),
        "match_tokens": width,
        "eod": eod,
        "hash": HASH_VERSION,
        "sequences_per_unit": sequences_per_unit,
    }


def build_anchor_index(
    stream: TokenStream,
    folder: Path,
    *,
    width: int,
    eod: int,
    workers: int = 1,
    sequences_per_unit: int = 65_536,
    block_sequences: int = 8_192,
    progress: bool = True,
) -> StepStats:
    """Index every unit of `stream` not yet indexed under `folder` (workers in parallel)."""
    if width < 1 or width > stream.seq_length:
        raise ConfigError(f"match_tokens must be between 1 and seq_length, not {width}")
    stats = StepStats("anchor_index", info={"folder": str(folder), "match_tokens": width})
    wanted = manifest(stream, width, eod, sequences_per_unit)
    recorded = folder / "index.json"
    if recorded.is_file():
        if read_json(recorded) != wanted:
            raise ConfigError(
                f"{folder} holds an anchor index of another stream or other settings; "
                "delete it or choose another folder"
            )
    else:
        write_json(recorded, wanted)
    units = stream.units(sequences_per_unit)
    todo = [unit for unit in units if not unit_path(folder, unit).is_file()]
    stats.add("units", len(units))
    stats.add("units_done_before", len(units) - len(todo))
    jobs = [(stream, unit, folder, width, eod, block_sequences) for unit in todo]
    total = sum(unit.stop - unit.first for unit in todo)
    with tqdm(total=total, unit="seq", desc="anchor index", disable=not progress) as bar:
        for counts in _run(jobs, workers):
            for name, value in counts.items():
                stats.add(name, value)
            bar.update(counts["sequences"])
    return stats


def _run(jobs: list[tuple[Any, ...]], workers: int) -> Iterator[dict[str, int]]:
    """Results of the index jobs, in-process for one worker, else from a process pool."""
    if workers <= 1 or len(jobs) <= 1:
        yield from (_index_unit_job(job) for job in jobs)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(min(workers, len(jobs))) as pool:
        yield from pool.imap_unordered(_index_unit_job, jobs)


def load_unit(path: Path) -> UnitAnchors:
    """One stored unit."""
    with np.load(path) as data:
        kinds = {
            kind: Anchors(*(data[f"{kind}_{name}"] for name in ARRAYS))
            for kind in ("complete", "truncated")
        }
        return UnitAnchors(int(data["first"][0]), data["heads"], data["batches"], **kinds)


def iter_index(stream: TokenStream, folder: Path, sequences_per_unit: int) -> Iterator[UnitAnchors]:
    """Every unit of a complete index, in stream order; InputError when one is missing."""
    units = stream.units(sequences_per_unit)
    missing = [unit for unit in units if not unit_path(folder, unit).is_file()]
    if missing:
        raise InputError(
            f"anchor index incomplete: {len(missing)} of {len(units)} units missing "
            f"(first {missing[0].name}); build it first",
            path=str(folder),
        )
    for unit in units:
        yield load_unit(unit_path(folder, unit))
