"""End to end: questions per second and peak memory of `CreateDataset` on each corpus size.

    python -m benchmarks.end_to_end [--sizes 10000 100000] [--large] [--kind flat] [--runtime auto]

Runs `python -m luigi --module pipelines CreateDataset --local-scheduler` on the demo world of
each size (written beforehand, given to the pipeline as a `files` corpus and a `tipqa-jsonl`
question pool, so world generation is not timed), with the offline rule keywords and judge,
the MiniLM embedder on its CPU default runtime (ONNX Runtime, fp32) and a flat FAISS index
by default. Peak memory is the maximum
resident set of the luigi process (os.wait4). The seconds of every stage come from the stats
files, and every label is checked against the label the world has by construction.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from benchmarks.common import (
    K1,
    arguments,
    ensure_world,
    read_stats,
    save,
    start_luigi,
    stopwatch,
    table,
    wait_with_usage,
    write_luigi_config,
)
from tipqa.core.jsonl import read_records
from tipqa.core.records import LABELS, LabeledQuestion

STEPS = ("keywords", "token_search", "token_judge", "vector_search", "vector_judge")


def config_for(world: Path, folder: Path, kind: str, runtime: str, shard_size: int) -> Path:
    """The luigi.cfg of a run on a written world."""
    pools = {"dev": {"source": "tipqa-jsonl", "paths": [str(world / "questions.jsonl")]}}
    return write_luigi_config(
        folder,
        {
            "build": {"shard_size": str(shard_size), "k1": str(K1), "k2": "10"},
            "questions": {"pools": json.dumps(pools)},
            "corpus": {"source": "files", "paths": json.dumps([str(world / "corpus")])},
            "embedder": {"runtime": runtime},
            "vector_index": {"backend": "faiss", "kind": kind},
        },
    )


def stage_seconds(run: Path) -> dict[str, float]:
    """Seconds per stage from the stats files (shards summed)."""
    seconds = {
        "token_index": read_stats(run / "index" / "token.stats.json")["seconds"],
        "vector_index": read_stats(run / "index" / "vector.stats.json")["seconds"],
    }
    pool = run / "pools" / "dev"
    for step in STEPS:
        seconds[step] = round(
            sum(read_stats(p)["seconds"] for p in pool.glob(f"shards/*/{step}.stats.json")), 2
        )
    seconds["partition"] = read_stats(pool / "partition" / "stats.json")["seconds"]
    return seconds


def agreement(world: Path, run: Path) -> float:
    """Share of questions whose label equals the label by construction."""
    from tipqa.sources.demo.world import Expected

    expected = {e.question_id: e.label for e in read_records(world / "expected.jsonl", Expected)}
    folder = run / "pools" / "dev" / "partition"
    rows = [r for label in LABELS for r in read_records(folder / f"{label}.jsonl", LabeledQuestion)]
    return sum(expected[r.id] == r.label for r in rows) / len(expected)


def run_size(size: int, args: Any) -> dict[str, Any]:
    """One uninterrupted build at `size`."""
    world = ensure_world(size, args.workdir)
    folder = args.workdir / f"e2e-{size}"
    shutil.rmtree(folder, ignore_errors=True)
    config = config_for(world, folder, args.kind, args.runtime, args.shard_size)
    with stopwatch() as clock:
        process = start_luigi(config, folder / "luigi.log")
        code, peak_mib = wait_with_usage(process)
    if code != 0:
        tail = (folder / "luigi.log").read_text()[-3000:]
        raise RuntimeError(f"CreateDataset failed at size {size} (exit {code}):\n{tail}")
    run = folder / "outputs" / "bench"
    questions = (run / "pools" / "dev" / "questions.jsonl").read_bytes().count(b"\n")
    row = {
        "size": size,
        "questions": questions,
        "seconds": round(clock["seconds"], 1),
        "questions_per_s": round(questions / clock["seconds"], 3),
        "peak_rss_mib": round(peak_mib),
        "label_agreement": round(agreement(world, run), 4),
        "stages_s": stage_seconds(run),
    }
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return row


def _extra(parser: Any) -> None:
    """The options of this benchmark."""
    parser.add_argument("--kind", default="flat", choices=["flat", "hnsw", "pq-rerank"])
    parser.add_argument("--runtime", default="auto", choices=["auto", "onnx", "openvino", "torch"])
    parser.add_argument("--shard-size", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the run's outputs")


def main() -> None:
    """Run every size, print the table, save the JSON."""
    args = arguments(__doc__.splitlines()[0], _extra)
    rows = [run_size(size, args) for size in args.sizes]
    columns = ["size", "questions", "seconds", "questions_per_s", "peak_rss_mib"]
    print(table(rows, [*columns, "label_agreement"]))
    stage_rows = [{"size": r["size"], **r["stages_s"]} for r in rows]
    print()
    print(table(stage_rows, ["size", "token_index", "vector_index", *STEPS, "partition"]))
    settings = {"vector_index": args.kind, "runtime": args.runtime, "shard_size": args.shard_size}
    print("saved", save("end_to_end", {"settings": settings, "rows": rows}, args.results))


if __name__ == "__main__":
    main()
