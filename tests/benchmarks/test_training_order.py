"""The training-order benchmark at a tiny size: it runs, finds every window, reports Pythia."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks import training_order


def test_benchmark_runs_small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    work = tmp_path / "work"
    argv = ["training_order", "--gb", "0.01", "--workdir", str(work), "--spans", "20",
            "--results", str(tmp_path / "results")]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    training_order.main()
    printed = capsys.readouterr().out
    result = json.loads(printed[: printed.rindex("}") + 1])
    assert result["rows"]["match"]["found_whole"] == result["rows"]["match"]["spans"] > 0
    assert result["pythia_estimate"]["bytes"] == 146_432_000 * 2049 * 2
    assert set(result["index_seconds_over"]) == {
        "read_disk", "read_page_cache", "touch_disk", "touch_page_cache",
    }  # fmt: skip
    assert not work.exists()
    assert len(list((tmp_path / "results").glob("training_order-*.json"))) == 1
