"""The candidate vector stage against the full index, side by side, as whole builds.

    python -m benchmarks.candidates [--documents 2000] [--counts 10 30 100 300] [--no-real]
        [--mixed N] [--reuse]

For each world (the demo world of `--documents` documents; the real sample in ../shared/data:
Wikipedia passages and TriviaQA's evidence files as two corpus groups, TriviaQA's official
sample as questions; with `--mixed N`, the real sample with the N documents of a demo world
beside it as a third group, so that real questions meet a large corpus), `CreateDataset`
runs once with the full index (FAISS `flat`: exact) and once per candidate count with
`[vector_index] backend = candidates`, each in a folder of its own, with the offline rules
for keywords and judge. Reported per build: wall and CPU seconds
of the whole build (the luigi process and its children), chunks embedded and their share of
the corpus's chunks (the full index embeds all of them), and against the full build: the
recall of its exact top-k2 chunks per question that reached the vector stage, the recall of
those among them that the judge found relevant (the chunks that can make a label), and the
questions whose label changed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
    ROOT,
    keep,
    read_stats,
    save,
    start_luigi,
    table,
    write_luigi_config,
)
from tipqa.core.jsonl import read_records, write_json
from tipqa.core.records import LABELS, Judgment, LabeledQuestion, VectorCandidates
from tipqa.sources.demo.world import WorldSpec, write_world

SHARED = ROOT.parent / "shared" / "data"
K2 = "10"


def filler(documents: int, workdir: Path) -> Path:
    """The corpus folder of a demo world of `documents` documents, written once."""
    folder = workdir / f"filler-{documents}"
    if not (folder / "world.json").exists():
        write_world(WorldSpec(documents=documents, seed=5, files=4), folder)
    return folder / "corpus"


def worlds(
    documents: int, real: bool, mixed: int, workdir: Path
) -> dict[str, dict[str, dict[str, str]]]:
    """The config sections of each world, without the vector stage."""
    found = {
        "demo": {
            "demo": {"documents": str(documents), "seed": "5", "files": "4"},
            "pool.dev": {"source": "demo"},
        }
    }
    if (real or mixed) and SHARED.is_dir():
        found["real"] = {
            "corpus": {"source": "files"},
            "corpus.passages": {
                "paths": str(SHARED / "corpus" / "wikipedia-passages-1000.jsonl"),
                "text_field": "contents",
            },
            "corpus.evidence": {
                "paths": str(SHARED / "triviaqa" / "official-sample" / "evidence"),
                "format": "text",
            },
            "pool.dev": {
                "source": "triviaqa-json",
                "paths": str(SHARED / "triviaqa" / "official-sample" / "qa"),
            },
        }
        if mixed:
            found[f"mixed {mixed}"] = {
                **found["real"],
                "corpus.filler": {"paths": str(filler(mixed, workdir))},
            }
        if not real:
            del found["real"]
    return found


def build(folder: Path, sections: dict[str, dict[str, str]], reuse: bool) -> dict[str, Any]:
    """Run `CreateDataset` in `folder`; its wall and CPU seconds (children included).

    With `reuse`, a folder whose build finished under the same sections is measured again
    from the times it recorded instead of being rebuilt.
    """
    times = folder / "times.json"
    if reuse and times.exists() and read_stats(times)["sections"] == sections:
        return read_stats(times)["times"]
    shutil.rmtree(folder, ignore_errors=True)
    config = write_luigi_config(folder, sections)
    before, began = os.times(), time.perf_counter()
    process = start_luigi(config, folder / "luigi.log")
    code = process.wait()
    after = os.times()
    if code != 0:
        raise RuntimeError(f"the build in {folder} failed ({code}); see {folder / 'luigi.log'}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    measured = {"wall_s": round(time.perf_counter() - began, 1), "cpu_s": round(cpu, 1)}
    write_json(times, {"sections": sections, "times": measured})
    return measured


def run_folder(folder: Path) -> Path:
    """The run's output folder."""
    return folder / "outputs" / "bench"


def labels(folder: Path) -> dict[str, str]:
    """Every question's label."""
    partition = run_folder(folder) / "pools" / "dev" / "partition"
    rows = [
        r for label in LABELS for r in read_records(partition / f"{label}.jsonl", LabeledQuestion)
    ]
    return {row.id: row.label for row in rows}


def hits(folder: Path) -> dict[str, list[str]]:
    """The chunk ids of each question's vector hits."""
    shards = sorted((run_folder(folder) / "pools" / "dev" / "shards").iterdir())
    return {
        found.question_id: [hit.chunk_id for hit in found.hits]
        for shard in shards
        for found in read_records(shard / "vector_candidates.jsonl", VectorCandidates)
    }


def relevant(folder: Path) -> dict[str, set[str]]:
    """The chunk ids of each question's vector hits that the judge found relevant."""
    shards = sorted((run_folder(folder) / "pools" / "dev" / "shards").iterdir())
    found: dict[str, set[str]] = {}
    for shard in shards:
        for judged in read_records(shard / "vector_judgments.jsonl", Judgment):
            if judged.label == "yes":
                found.setdefault(judged.question_id, set()).add(judged.unit_id)
    return found


def recall(wanted: dict[str, set[str]], mine: dict[str, list[str]]) -> float | None:
    """The share of the wanted chunk ids, over all questions, that `mine` found."""
    total = sum(len(ids) for ids in wanted.values())
    found = sum(len(ids & set(mine.get(q, []))) for q, ids in wanted.items())
    return round(found / total, 4) if total else None


def embedded(folder: Path) -> int:
    """Chunks the candidate stage embedded, over every shard."""
    shards = sorted((run_folder(folder) / "pools" / "dev" / "shards").iterdir())
    return sum(
        read_stats(shard / "vector_search.stats.json")["counts"].get("chunks_embedded", 0)
        for shard in shards
    )


def compare(
    world: str, sections: dict, counts: list[int], query: str, workdir: Path, reuse: bool
) -> list[dict]:
    """The full build, then one build per candidate count, compared with it."""
    base = {**sections, "build": {"k2": K2}}
    full_dir = workdir / world.replace(" ", "-") / "full"
    full = {
        "world": world,
        "stage": "full (flat)",
        **build(full_dir, {**base, "vector_index": {"backend": "faiss", "kind": "flat"}}, reuse),
    }
    corpus_chunks = read_stats(run_folder(full_dir) / "index" / "vector.stats.json")["counts"][
        "index.chunks"
    ]
    full.update(
        chunks_embedded=corpus_chunks, share=1.0, recall=1.0, relevant_recall=1.0, labels_changed=0
    )
    exact, truth, judged = hits(full_dir), labels(full_dir), relevant(full_dir)
    wanted = {q: set(ids) for q, ids in exact.items() if ids}
    rows = [full]
    for count in counts:
        folder = workdir / world.replace(" ", "-") / f"candidates-{count}"
        vector = {"backend": "candidates", "candidates": str(count), "query": query}
        row = {
            "world": world,
            "stage": f"candidates {count}",
            **build(folder, {**base, "vector_index": vector}, reuse),
        }
        mine = hits(folder)
        chunks = embedded(folder)
        row.update(
            chunks_embedded=chunks,
            share=round(chunks / corpus_chunks, 4),
            recall=recall(wanted, mine),
            relevant_recall=recall(judged, mine),
            labels_changed=sum(labels(folder)[q] != label for q, label in truth.items()),
            questions=len(truth),
            vector_questions=len(wanted),
            speedup=round(full["wall_s"] / row["wall_s"], 2),
        )
        rows.append(row)
    return rows


def main() -> None:
    """Every world, full index against each candidate count; print and save the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 30, 100, 300])
    parser.add_argument("--no-real", action="store_true", help="without the real sample alone")
    parser.add_argument(
        "--mixed",
        type=int,
        default=0,
        metavar="N",
        help="also the real sample with N demo documents beside it as a third corpus group",
    )
    parser.add_argument("--query", choices=["question", "question+answers"], default="question")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR / "candidates")
    parser.add_argument("--name", default="candidates", help="the results' file name")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument(
        "--reuse", action="store_true", help="keep builds already finished under the same config"
    )
    args = parser.parse_args()
    rows = []
    found = worlds(args.documents, not args.no_real, args.mixed, args.workdir)
    for world, sections in found.items():
        rows += compare(world, sections, args.counts, args.query, args.workdir, args.reuse)
    columns = ["world", "stage", "wall_s", "cpu_s", "chunks_embedded", "share", "recall"]
    markdown = table(rows, [*columns, "relevant_recall", "labels_changed", "speedup"])
    print(markdown)
    settings = {"documents": args.documents, "counts": args.counts, "k2": int(K2)}
    settings["mixed"] = args.mixed
    settings["query"] = args.query
    keep(save(args.name, {"settings": settings, "rows": rows}, args.results), markdown)


if __name__ == "__main__":
    main()
