"""The anchor index: windows after every EOD and at every sequence head, resumable by range."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.training_order.anchors import (
    block_anchors,
    build_anchor_index,
    hash_windows,
    iter_index,
    unit_path,
)
from tipqa.training_order.megatron_format import IndexedDatasetWriter
from tipqa.training_order.streams import MegatronStream

EOD = 0


def one_hash(tokens: list[int], width: int = 4) -> int:
    window = np.zeros((1, width), dtype=np.int64)
    window[0, : len(tokens)] = tokens
    return int(hash_windows(window, np.array([len(tokens)]))[0])


def test_hash_depends_on_the_tokens_and_their_number_only() -> None:
    assert one_hash([3, 4]) == one_hash([3, 4])
    windows = np.array([[3, 4, 9, 9], [3, 4, 1, 2]])
    same = hash_windows(windows, np.array([2, 2]))
    assert same[0] == same[1] == one_hash([3, 4])
    assert one_hash([3, 4]) != one_hash([3, 4, 0])
    assert one_hash([3, 4]) != one_hash([4, 3])
    assert len({one_hash([a, b]) for a in range(50) for b in range(50)}) == 2500


def naive_anchors(tokens: np.ndarray, width: int) -> tuple[list, list, list]:
    """Heads, complete and truncated anchors, one token at a time."""

    def window(row: np.ndarray, start: int) -> tuple[list[int], bool]:
        out: list[int] = []
        for token in row[start : start + width]:
            out.append(int(token))
            if token == EOD:
                return out, True
        return out, len(out) == width

    heads = [one_hash(window(row, 0)[0], width) for row in tokens]
    complete, truncated = [], []
    for r, row in enumerate(tokens):
        for q in range(len(row) - 1):
            if row[q] == EOD:
                found, whole = window(row, q + 1)
                (complete if whole else truncated).append((r, q + 1, one_hash(found, width)))
    return heads, complete, truncated


def test_block_anchors_equal_a_naive_scan() -> None:
    rng = np.random.default_rng(5)
    tokens = rng.integers(1, 30, size=(60, 23))
    tokens[rng.random(tokens.shape) < 0.12] = EOD
    tokens[0, 0] = tokens[1, -1] = tokens[2, -2] = EOD
    tokens[3, 4:6] = EOD
    heads, complete, truncated = block_anchors(tokens, 4, EOD)
    want_heads, want_complete, want_truncated = naive_anchors(tokens, 4)
    assert heads.tolist() == [np.uint64(h) for h in want_heads]
    for found, want in ((complete, want_complete), (truncated, want_truncated)):
        columns = (found.rows.tolist(), found.positions.tolist(), found.hashes.tolist())
        assert list(zip(*columns, strict=True)) == want
    got = list(zip(truncated.rows.tolist(), truncated.positions.tolist(),
                   truncated.hashes.tolist(), strict=True))  # fmt: skip
    assert len(want_truncated) > 0 and (2, 22, one_hash([int(tokens[2, -1])])) in got


def write_stream(prefix: Path, count: int, length: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tokens = rng.integers(1, 500, size=(count, length)).astype(np.uint16)
    tokens[rng.random(tokens.shape) < 0.02] = EOD
    with IndexedDatasetWriter(prefix) as writer:
        writer.add_sequences(tokens)
    return tokens


def test_index_is_resumable_by_range(tmp_path: Path) -> None:
    tokens = write_stream(tmp_path / "s", 50, 33)
    stream = MegatronStream(tmp_path / "s", 33, 4)
    folder = tmp_path / "index"
    first = build_anchor_index(stream, folder, width=5, eod=EOD, sequences_per_unit=8,
                               progress=False)  # fmt: skip
    assert first.counts["units"] == 7 and first.counts["units_done_before"] == 0
    assert first.counts["sequences"] == 50 and first.counts["tokens"] == 50 * 33
    units = stream.units(8)
    before = {u.name: unit_path(folder, u).read_bytes() for u in units}
    unit_path(folder, units[3]).unlink()
    again = build_anchor_index(stream, folder, width=5, eod=EOD, sequences_per_unit=8,
                               progress=False)  # fmt: skip
    assert again.counts["units_done_before"] == 6 and again.counts["sequences"] == 8
    assert {u.name: unit_path(folder, u).read_bytes() for u in units} == before
    loaded = list(iter_index(stream, folder, 8))
    heads = np.concatenate([u.heads for u in loaded])
    assert heads.tolist() == block_anchors(tokens, 5, EOD)[0].tolist()
    assert np.concatenate([u.batches for u in loaded]).tolist() == [i // 4 for i in range(50)]
    rows = np.concatenate([u.first + u.complete.rows.astype(np.int64) for u in loaded])
    assert rows.tolist() == block_anchors(tokens, 5, EOD)[1].rows.tolist()


def test_index_of_other_settings_is_refused_and_missing_units_reported(tmp_path: Path) -> None:
    write_stream(tmp_path / "s", 20, 17)
    stream = MegatronStream(tmp_path / "s", 17, 4)
    folder = tmp_path / "index"
    build_anchor_index(stream, folder, width=4, eod=EOD, sequences_per_unit=8, progress=False)
    with pytest.raises(ConfigError, match="another stream or other settings"):
        build_anchor_index(stream, folder, width=6, eod=EOD, sequences_per_unit=8, progress=False)
    unit_path(folder, stream.units(8)[1]).unlink()
    with pytest.raises(InputError, match="1 of 3 units missing"):
        list(iter_index(stream, folder, 8))
    with pytest.raises(ConfigError, match="match_tokens must be between 1 and seq_length"):
        build_anchor_index(stream, tmp_path / "i2", width=18, eod=EOD, progress=False)


def test_parallel_workers_write_the_same_index(tmp_path: Path) -> None:
    write_stream(tmp_path / "s", 64, 65, seed=2)
    stream = MegatronStream(tmp_path / "s", 65, 8)
    for workers in (1, 2):
        build_anchor_index(stream, tmp_path / f"w{workers}", width=8, eod=EOD, workers=workers,
                           sequences_per_unit=16, progress=False)  # fmt: skip
    for unit in stream.units(16):
        one = np.load(unit_path(tmp_path / "w1", unit))
        two = np.load(unit_path(tmp_path / "w2", unit))
        assert sorted(one.files) == sorted(two.files)
        for name in one.files:
            assert one[name].tolist() == two[name].tolist(), name
