"""What it costs Luigi to learn that a big build is finished, and a shard step to read its input.

A synthetic finished build of `--shards` question shards (default 1,000, `--shard-size` 200
questions each) is written: the pool's questions and every step's stats file with the
fingerprint the build plan gives, so every task is complete and nothing runs. Measured:

- `complete()` of every task of the graph (questions, both indexes, five steps per shard,
  partition, splits, Hub folder, report), in one process, as Luigi calls it;
- the input read of one shard step: the shard's own question file now, against the whole pool
  file that every shard step read before (`--old-tree`: a checkout of an older tipqa whose
  `ShardTask.complete()` is also timed on the same number of stats files).

    python -m benchmarks.completeness [--shards 1000] [--old-tree /tmp/tipqa-147f86a]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import luigi.configuration

from benchmarks.common import DEFAULT_WORKDIR, run_probe, write_luigi_config
from tipqa.core.jsonl import read_records, write_json, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import SCHEMA_VERSION, Question
from tipqa.core.steps import SHARD_STEPS

# Run in the other tree, whose layout is detected: where `shard_questions` lives, and whether it
# reads a shard from the whole pool file (path, shard, size) or from the shard's own file.
OLD_PROBE = """
import importlib, inspect, sys, time
from pathlib import Path
from pipelines import ExtractKeywords, TokenJudge, TokenSearch, VectorJudge, VectorSearch
shards, size, pool = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
def first_module(*names):
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"none of {names} in this tree")
reader = first_module("tipqa.builder.inputs", "tipqa.build.steps", "tipqa.steps").shard_questions
if len(inspect.signature(reader).parameters) == 3:
    def read_input():
        reader(pool / "questions.jsonl", shards // 2, size)
else:
    layout = first_module("tipqa.core.layout", "tipqa.layout")
    def read_input():
        reader(layout.PoolLayout(pool).shard(shards // 2))
started = time.perf_counter()
tasks = [t(pool="dev", shard=i) for i in range(shards)
         for t in (ExtractKeywords, TokenSearch, TokenJudge, VectorSearch, VectorJudge)]
done = sum(task.complete() for task in tasks)
complete = time.perf_counter() - started
started = time.perf_counter()
read_input()
read = time.perf_counter() - started
print(done, complete, read)
"""


def write_finished_build(folder: Path, shards: int, shard_size: int) -> tuple[Path, Any]:
    """A config and a run whose every step's stats file records the current fingerprint."""
    from pipelines.config import plan

    questions = [
        Question(f"q{i}", f"Which town is number {i}?", f"Town {i}", [f"Town {i}"])
        for i in range(shards * shard_size)
    ]
    source = folder / "questions.jsonl"
    write_records(source, questions)
    corpus = folder / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "text": "Town 1 is a town."}\n')
    config = write_luigi_config(
        folder,
        {
            "build": {"name": "bench", "shard_size": str(shard_size)},
            "pool.dev": {"source": "tipqa-jsonl", "paths": str(source)},
            "corpus": {"source": "files", "paths": str(corpus)},
        },
    )
    os.environ["LUIGI_CONFIG_PATH"] = str(config)
    luigi.configuration.LuigiConfigParser.add_config_path(str(config))
    build = plan()
    run = build.config.layout()
    pool = run.pool("dev")
    write_records(pool.questions, questions)
    for number in range(shards):
        shard = pool.shard(number)
        write_records(shard.questions, questions[number * shard_size : (number + 1) * shard_size])
        for step in SHARD_STEPS:
            _stats(shard.stats(step), build.shard("dev", step, number).fingerprint, step)
    _stats(pool.questions_stats, build.questions("dev").fingerprint, "questions", shards)
    _stats(run.index_stats("token_index"), build.token_index.fingerprint, "token_index")
    _stats(run.index_stats("vector_index"), build.vector_index.fingerprint, "vector_index")
    _stats(pool.partition_stats, build.partition("dev").fingerprint, "partition")
    _stats(run.splits_stats, build.splits.fingerprint, "splits")
    _stats(run.hub_stats, build.hub_folder.fingerprint, "hub_folder")
    _stats(run.report_stats, build.report.fingerprint, "report")
    return config, run


def _stats(path: Path, fingerprint: str, stage: str, shards: int = 0) -> None:
    """A stats file as a finished step leaves it (an older tipqa needs only its path)."""
    counts = {"shards": shards} if shards else {}
    write_json(
        path,
        {"step": stage, "schema_version": SCHEMA_VERSION, "fingerprint": fingerprint,
         "counts": counts},
    )  # fmt: skip


def time_new(run: RunLayout, shards: int) -> dict[str, float]:
    """complete() of every task of the graph, and one shard step's input read."""
    from pipelines import (
        BuildHubFolder,
        BuildReport,
        BuildTokenIndex,
        BuildVectorIndex,
        MakeSplits,
        Partition,
        PrepareQuestions,
    )
    from pipelines.shard_steps import (
        ExtractKeywords,
        TokenJudge,
        TokenSearch,
        VectorJudge,
        VectorSearch,
    )
    from tipqa.builder.inputs import shard_questions

    started = time.perf_counter()
    tasks = [PrepareQuestions(pool="dev"), BuildTokenIndex(), BuildVectorIndex()]
    tasks += [
        task(pool="dev", shard=number)
        for number in range(shards)
        for task in (ExtractKeywords, TokenSearch, TokenJudge, VectorSearch, VectorJudge)
    ]
    tasks += [Partition(pool="dev"), MakeSplits(), BuildHubFolder(), BuildReport()]
    done = sum(task.complete() for task in tasks)
    complete = time.perf_counter() - started
    assert done == len(tasks), f"{len(tasks) - done} tasks are not complete"
    started = time.perf_counter()
    shard_questions(run.pool("dev").shard(shards // 2))
    read = time.perf_counter() - started
    started = time.perf_counter()
    read_records(run.pool("dev").questions, Question)
    whole = time.perf_counter() - started
    return {
        "tasks": len(tasks),
        "complete_seconds": round(complete, 3),
        "complete_ms_per_task": round(1000 * complete / len(tasks), 3),
        "shard_input_read_ms": round(1000 * read, 2),
        "whole_pool_read_ms": round(1000 * whole, 1),
    }


def time_old(tree: Path, config: Path, run: RunLayout, shards: int, size: int) -> dict[str, float]:
    """The same with an older tipqa checkout (its stats files need only exist)."""
    pool = run.pool("dev").root
    args = [str(shards), str(size), str(pool)]
    printed = run_probe(tree, OLD_PROBE, args, {"LUIGI_CONFIG_PATH": str(config)})
    done, complete, read = printed.split()
    return {
        "tasks": int(done),
        "complete_seconds": round(float(complete), 3),
        "shard_input_read_ms": round(1000 * float(read), 1),
        "shard_inputs_read_per_build_s": round(5 * shards * float(read), 1),
    }


def main() -> None:
    """Write the synthetic build, time it, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shards", type=int, default=1000)
    parser.add_argument("--shard-size", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR / "completeness")
    parser.add_argument("--old-tree", type=Path, help="a checkout of an older tipqa to compare")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    config, run = write_finished_build(args.workdir, args.shards, args.shard_size)
    results: dict[str, Any] = {"shards": args.shards, "shard_size": args.shard_size}
    results["now"] = time_new(run, args.shards)
    if args.old_tree:
        results["before"] = time_old(args.old_tree, config, run, args.shards, args.shard_size)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
