"""Send undetermined questions back for another try.

A failed judgment (or keyword extraction) leaves its question undetermined, never "no". The
shard's steps still finish, so that one server outage does not stop the build; retrying is a
separate, explicit act: `reset_failed` deletes the outputs of every shard step from the first
one that recorded a failure, and everything derived from them (the pool's partition, the
splits, the Hub folder and the report). The next build recomputes just that, and the LLM cache
makes every judgment that had succeeded free.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from tipqa.core.jsonl import read_json
from tipqa.core.layout import PoolLayout, RunLayout, ShardLayout
from tipqa.core.steps import SHARD_STEPS, Step

FAILURE_PREFIXES = ("judgment_", "confirmation_", "extraction_failed")


def step_failures(shard: ShardLayout, step: str) -> Counter[str]:
    """The LLM failures a step of the shard recorded, by kind (`judgment_http_500`: 3, ...)."""
    path = shard.stats(step)
    stats = read_json(path) if path.is_file() else {}
    errors = stats.get("errors", {}) if isinstance(stats, dict) else {}
    return Counter({k: int(v) for k, v in errors.items() if k.startswith(FAILURE_PREFIXES)})


def shard_failures(shard: ShardLayout) -> Counter[str]:
    """The LLM failures every step of the shard recorded, by kind."""
    return sum((step_failures(shard, step) for step in SHARD_STEPS), Counter())


def first_failed_step(shard: ShardLayout) -> str | None:
    """The earliest step of the shard whose stats record an LLM failure, if any."""
    return next((step for step in SHARD_STEPS if step_failures(shard, step)), None)


def reset_shard(shard: ShardLayout, step: str) -> list[Path]:
    """Mark `step` and every later step of the shard unfinished (their stats files go).

    Their data files stay until the steps rerun and replace them atomically.
    """
    removed = []
    for later in SHARD_STEPS[SHARD_STEPS.index(Step(step)) :]:
        path = shard.stats(later)
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def failed_shards(run: RunLayout, pools: list[str]) -> list[tuple[PoolLayout, ShardLayout]]:
    """The shards of `pools` with a recorded LLM failure."""
    found = []
    for name in pools:
        pool = run.pool(name)
        for folder in sorted(pool.shards.glob("shard-*")):
            if first_failed_step(ShardLayout(folder)) is not None:
                found.append((pool, ShardLayout(folder)))
    return found


def reset_failed(run: RunLayout, pools: list[str]) -> dict[str, int]:
    """Reset every failed shard of `pools` and the outputs derived from them; count them."""
    failed = failed_shards(run, pools)
    for pool, shard in failed:
        step = first_failed_step(shard)
        assert step is not None
        reset_shard(shard, step)
        shutil.rmtree(pool.partition, ignore_errors=True)
    if failed:
        for derived in (run.splits, run.hub, run.report):
            shutil.rmtree(derived, ignore_errors=True)
        run.hub_stats.unlink(missing_ok=True)
    return {"shards_reset": len(failed)}
