"""Resetting the shards whose LLM calls failed, and what was derived from them."""

from __future__ import annotations

from pathlib import Path

from tipqa.core.jsonl import write_json
from tipqa.core.layout import RunLayout
from tipqa.core.steps import SHARD_STEPS
from tipqa.dataset.retry import failed_shards, first_failed_step, reset_failed

STEPS = list(SHARD_STEPS)


def finished_shard(run: RunLayout, index: int, errors: dict[str, dict[str, int]]) -> Path:
    shard = run.pool("dev").shard(index)
    for step in STEPS:
        write_json(shard.stats(step), {"step": step, "errors": errors.get(step, {})})
    return shard.root


def test_only_failed_steps_and_their_successors_are_reset(tmp_path: Path) -> None:
    run = RunLayout(tmp_path)
    finished_shard(run, 0, {})
    finished_shard(run, 1, {"token_judge": {"judgment_http_500": 2, "missing_document": 1}})
    finished_shard(run, 2, {"keywords": {"extraction_failed": 1}})
    finished_shard(run, 3, {"token_judge": {"missing_document": 1}})
    for derived in (run.pool("dev").partition, run.splits, run.root / "hub", run.root / "report"):
        write_json(derived / "stats.json", {})

    assert [first_failed_step(run.pool("dev").shard(i)) for i in range(4)] == [
        None,
        "token_judge",
        "keywords",
        None,
    ]
    assert reset_failed(run, ["dev"]) == {"shards_reset": 2}
    remaining = {
        i: [s for s in STEPS if run.pool("dev").shard(i).stats(s).is_file()] for i in range(4)
    }
    assert remaining == {0: STEPS, 1: ["keywords", "token_search"], 2: [], 3: STEPS}
    assert not run.pool("dev").partition.exists() and not run.splits.exists()
    assert not (run.root / "hub").exists() and not (run.root / "report").exists()
    assert failed_shards(run, ["dev"]) == []


def test_nothing_failed_means_nothing_is_touched(tmp_path: Path) -> None:
    run = RunLayout(tmp_path)
    finished_shard(run, 0, {})
    write_json(run.splits / "stats.json", {})
    assert reset_failed(run, ["dev"]) == {"shards_reset": 0}
    assert (run.splits / "stats.json").is_file()
