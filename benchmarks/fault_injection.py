"""Fault injection: SIGKILL the pipeline at random moments in every stage, resume, compare.

    python -m benchmarks.fault_injection [--documents 2000] [--seed 0] [--kills-per-stage 1]

A clean run of `CreateDataset` on a demo world comes first; its luigi log (INFO level, read as it
is written) gives each stage's duration. Then, in a second output folder, the pipeline is
started again and again; each start is killed (SIGKILL to the luigi process group) at a random
moment (within the stage's clean duration) after the first not yet targeted stage starts
running, until every stage was targeted or none of them has work left; a last start runs to the
end. The partition JSONL files must then equal the clean run's byte for byte.

Keywords and judgments go through the `openai` backends (cache on) to a local OpenAI-compatible
server (`tests/support/openai_server.py`) that answers like the offline rules and counts every
request per prompt with the moments it answered. A request whose answer is already in the run's LLM
cache is a repeated call for completed work: there must be none. Every prompt sent more than
once is counted (`resent_prompts`, `resent_requests`), and among them those answered more than
`LOST_MARGIN` seconds before a kill and asked again after it (`answered_then_lost`: answers
received and not kept): there must be none either. The others were in flight at the kill.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
    kill_group,
    luigi_command,
    luigi_env,
    save,
    table,
    write_luigi_config,
)
from benchmarks.counting_server import CountingServer

WRAPPERS = {"CreateDataset"}  # tasks that only require others: nothing to kill inside
EVENT = re.compile(r"\) (running|done|failed|new requirements)\s+(\w+)\(")
PARTITION_FILES = ("answerable", "unanswerable", "discarded", "undetermined", "instances")
LOST_MARGIN = 1.0  # seconds between an answer and a kill in which a client may not yet keep it


@dataclass
class Start:
    """One start of the pipeline: its events, and where a kill landed."""

    target: str | None
    delay: float | None = None
    code: int | None = None
    killed_in: str | None = None
    killed_at: float | None = None
    seconds: float = 0.0
    events: list[tuple[float, str, str]] = field(default_factory=list)
    calls: int = 0

    def running(self) -> str | None:
        """The task family running now (last started and not finished), if any."""
        open_tasks: list[str] = []
        for _, kind, family in self.events:
            if kind == "running":
                open_tasks.append(family)
            elif family in open_tasks:
                open_tasks.remove(family)
        return open_tasks[-1] if open_tasks else None


def run_once(
    config: Path,
    log: Path,
    targets: list[tuple[str, float]],
    when: Callable[[], bool] | None = None,
) -> Start:
    """Start the pipeline; when the first of `targets` (stage, delay) starts running, kill the
    process group `delay` s later (and once `when()` is true, if given). No targets: run to
    the end. A task that yields new requirements (Partition before its shards are done) is not
    really running yet: that disarms the kill until it runs again."""
    import subprocess

    start = Start(None)
    began = time.perf_counter()
    process = subprocess.Popen(
        luigi_command(),
        cwd=config.parent,
        env=luigi_env(config),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    delays = dict(reversed(targets))
    deadline: list[float] = []

    def read() -> None:
        with open(log, "ab") as out:
            for line in process.stdout:  # type: ignore[union-attr]
                out.write(line)
                found = EVENT.search(line.decode("utf-8", "replace"))
                if not found:
                    continue
                kind, family = found.group(1), found.group(2)
                start.events.append((time.perf_counter() - began, kind, family))
                if kind == "running" and not deadline and family in delays:
                    start.target, start.delay = family, delays[family]
                    deadline[:] = [time.perf_counter() + start.delay]
                elif kind == "new requirements" and family == start.target:
                    deadline.clear()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while process.poll() is None:
        if deadline and time.perf_counter() >= deadline[0] and (when is None or when()):
            start.killed_in = start.running() or "(between tasks)"
            start.killed_at = time.monotonic()
            kill_group(process)
            break
        time.sleep(0.01)
    reader.join(timeout=30)
    start.code = process.wait()
    start.seconds = round(time.perf_counter() - began, 2)
    return start


def durations(start: Start) -> dict[str, float]:
    """Seconds of the first completed run of each task family (from its last start)."""
    began: dict[str, float] = {}
    took: dict[str, float] = {}
    for moment, kind, family in start.events:
        if kind == "running":
            began[family] = moment
        elif kind == "done" and family not in took and family in began:
            took[family] = moment - began[family]
    return took


def config_for(folder: Path, server: CountingServer, documents: int, shard_size: int) -> Path:
    """A demo-world build whose keywords and judgments go to `server`."""
    return write_luigi_config(
        folder,
        {
            "core": {"log_level": "INFO"},
            "build": {"shard_size": str(shard_size), "k1": "20", "k2": "10", "llm_cache": "true"},
            "demo": {"documents": str(documents), "seed": "5", "files": "3"},
            "pool.dev": {"source": "demo"},
            "vector_index": {"backend": "faiss", "kind": "flat"},
            "keywords": server.settings(),
            "judge": server.settings(),
        },
    )


def partition_differences(clean: Path, other: Path) -> list[str]:
    """Names of the partition JSONL files that are not byte-for-byte equal."""
    names = [f"{name}.jsonl" for name in PARTITION_FILES]
    return [n for n in names if (clean / n).read_bytes() != (other / n).read_bytes()]


def partition_of(folder: Path) -> Path:
    """The partition folder of a run's dev pool."""
    return folder / "outputs" / "bench" / "pools" / "dev" / "partition"


def run_clean(folder: Path, server: CountingServer, documents: int, shard_size: int) -> Start:
    """The uninterrupted reference run."""
    shutil.rmtree(folder, ignore_errors=True)
    config = config_for(folder, server, documents, shard_size)
    server.begin(folder / "outputs" / "bench" / "llm-cache")
    start = run_once(config, folder / "luigi.log", [])
    start.calls = sum(server.phase_asked.values())
    if start.code != 0:
        raise RuntimeError(f"the clean run failed; see {folder / 'luigi.log'}")
    return start


def run_interrupted(
    folder: Path,
    server: CountingServer,
    plan: list[tuple[str, float]],
    documents: int,
    shard_size: int,
) -> tuple[list[Start], list[str]]:
    """Kill starts until every (stage, delay) of `plan` was used or no planned stage runs any
    more (its work was done in an earlier start), then run to the end. Returns the starts and
    the planned stages never reached."""
    shutil.rmtree(folder, ignore_errors=True)
    config = config_for(folder, server, documents, shard_size)
    cache = folder / "outputs" / "bench" / "llm-cache"
    starts: list[Start] = []
    remaining = list(plan)
    while True:
        server.begin(cache)
        start = run_once(config, folder / "luigi.log", remaining)
        start.calls = sum(server.phase_asked.values())
        starts.append(start)
        if start.killed_in is None:
            return starts, [stage for stage, _ in remaining]
        assert start.target is not None and start.delay is not None, "a kill was planned"
        remaining.remove((start.target, start.delay))


def summarize(
    server: CountingServer, clean: Start, starts: list[Start], clean_dir: Path, dirty_dir: Path
) -> dict[str, Any]:
    """Compare outputs and count repeated calls."""
    last = starts[-1]
    differences = (
        partition_differences(partition_of(clean_dir), partition_of(dirty_dir))
        if last.code == 0
        else list(PARTITION_FILES)
    )
    cache = dirty_dir / "outputs" / "bench" / "llm-cache"
    final_keys = server.stored_keys(cache)
    stored = final_keys | server.stored_keys(clean_dir / "outputs" / "bench" / "llm-cache")
    unstored = Counter(server.kinds[p] for p in server.asked if server.keys[p] not in stored)
    interrupted_calls = sum(s.calls for s in starts)
    kills = [s.killed_at for s in starts if s.killed_at is not None]
    resent = server.resent(cache)
    lost = server.answered_then_lost(cache, kills, LOST_MARGIN)
    return {
        "final_exit_code": last.code,
        "partition_identical": not differences,
        "differing_files": differences,
        "clean_calls": clean.calls,
        "interrupted_calls": interrupted_calls,
        "extra_calls": interrupted_calls - clean.calls,
        "repeated_calls_for_cached_work": len(server.repeated_cached),
        "resent_prompts": resent["prompts"],
        "resent_requests": resent["requests"],
        "answered_then_lost": len(lost),
        "answered_then_lost_detail": lost,
        "cache_keys_checked": not unstored,
        "asked_but_never_stored": dict(unstored),
        "kills": [
            {
                "target": s.target,
                "delay_s": None if s.delay is None else round(s.delay, 2),
                "killed_in": s.killed_in,
                "exit_code": s.code,
                "seconds": s.seconds,
                "llm_calls": s.calls,
            }
            for s in starts
        ],
    }


def make_plan(clean: Start, rng: random.Random, kills_per_stage: int) -> list[tuple[str, float]]:
    """(stage, delay) pairs: a random moment within each stage's clean duration, the stages in
    the order the clean run first started them (so that each kill finds its stage still to do).
    """
    took = durations(clean)
    started: dict[str, float] = {}
    first_run: dict[str, float] = {}
    for moment, kind, family in clean.events:
        if kind == "running":
            started[family] = moment
        elif kind == "done":
            first_run.setdefault(family, started[family])
    order = sorted(first_run, key=first_run.__getitem__)
    return [
        (stage, rng.uniform(0.0, took.get(stage, 0.0)))
        for stage in [s for s in order if s not in WRAPPERS]
        for _ in range(kills_per_stage)
    ]


def main() -> None:
    """Clean run, killed runs, comparison; non-zero exit when outputs differ or work repeats."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--shard-size", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kills-per-stage", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.005, help="server seconds per request")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR / "faults")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with CountingServer(delay=args.delay) as server:
        clean = run_clean(args.workdir / "clean", server, args.documents, args.shard_size)
        plan = make_plan(clean, rng, args.kills_per_stage)
        starts, missed = run_interrupted(
            args.workdir / "killed", server, plan, args.documents, args.shard_size
        )
        summary = summarize(server, clean, starts, args.workdir / "clean", args.workdir / "killed")
        summary["stages_not_reached"] = missed
    print(table(summary["kills"], ["target", "delay_s", "killed_in", "exit_code", "seconds"]))
    keys = ["partition_identical", "clean_calls", "interrupted_calls", "extra_calls"]
    keys += ["repeated_calls_for_cached_work", "resent_prompts", "resent_requests"]
    keys += ["answered_then_lost", "cache_keys_checked", "stages_not_reached"]
    print({k: summary[k] for k in keys})
    settings = {"documents": args.documents, "shard_size": args.shard_size, "seed": args.seed}
    print("saved", save("fault_injection", {"settings": settings, **summary}, args.results))
    kept = not summary["repeated_calls_for_cached_work"] and not summary["answered_then_lost"]
    ok = summary["partition_identical"] and kept
    sys.exit(0 if ok and summary["cache_keys_checked"] else 1)


if __name__ == "__main__":
    main()
