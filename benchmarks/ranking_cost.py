"""What exact frequency ranking costs the tantivy index, against an older tipqa.

    python -m benchmarks.ranking_cost --old-tree /tmp/tipqa-147f86a [--documents 1000000]

Builds the demo world of `--documents` documents with this tree's tantivy index and with the
older checkout's (which ranked the 1,000 best BM25 matches by frequency recounted from the
stored text), each in its own process with two writer threads / worker processes, and reports
for each: build wall and CPU seconds, index size, and p50/p95 of Algorithm 1's query on the
world's questions ("entity") and on pairs of frequent words ("broad"). The older index answers
with its own default ranking (approximate past 1,000 matches), this one exactly.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
    corpus_files,
    ensure_world,
    ratio,
    run_probe,
    save,
    table,
)
from benchmarks.token_index import broad_queries, name_queries

PROBE = r"""
import json, resource, shutil, sys, time
from pathlib import Path
import numpy as np
from tipqa.sources.corpus.files import FileCorpus
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex

files, folder, new = json.loads(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "new"
queries = json.loads(Path(sys.argv[4]).read_text())
shutil.rmtree(folder, ignore_errors=True)
index = TantivyTokenIndex.at(folder, threads=2) if new else TantivyTokenIndex(folder, threads=2)
started, cpu = time.perf_counter(), time.process_time()
index.build(iter(FileCorpus.of([Path(f) for f in files], progress=False)))
children = resource.getrusage(resource.RUSAGE_CHILDREN)
row = {
    "build_wall_s": round(time.perf_counter() - started, 2),
    "build_cpu_s": round(time.process_time() - cpu + children.ru_utime + children.ru_stime, 2),
    "index_mb": round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6, 1),
}
for name, group in queries.items():
    times = []
    for _ in range(3):
        for keywords, aliases in group:
            begun = time.perf_counter()
            index.search(keywords, aliases, 100)
            times.append(1000 * (time.perf_counter() - begun))
    row[f"{name}_p50_ms"] = round(float(np.percentile(times, 50)), 3)
    row[f"{name}_p95_ms"] = round(float(np.percentile(times, 95)), 3)
shutil.rmtree(folder)
print(json.dumps(row))
"""


def write_queries(world: Path, path: Path) -> Path:
    """The world's entity and broad queries, as JSON at `path` (read by both probes)."""
    queries = {"entity": name_queries(world), "broad": broad_queries(corpus_files(world))}
    path.write_text(json.dumps(queries))
    return path


def measure(tree: Path, world: Path, folder: Path, queries: Path, new: bool) -> dict[str, Any]:
    """One build and its queries, by the tipqa in `tree`, in a process of its own."""
    files = json.dumps([str(path) for path in corpus_files(world)])
    args = [files, str(folder), "new" if new else "old", str(queries)]
    return json.loads(run_probe(tree, PROBE, args).splitlines()[-1])


def main() -> None:
    """Measure both trees on one world, print the table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--old-tree", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    world = ensure_world(args.documents, args.workdir)
    here = Path(__file__).resolve().parents[1]
    queries = write_queries(world, args.workdir / "ranking-cost-queries.json")
    old = args.old_tree.resolve()
    rows = {
        "before": measure(old, world, args.workdir / "cost-old", queries, new=False),
        "now": measure(here, world, args.workdir / "cost-new", queries, new=True),
    }
    ratios = {key: ratio(rows["now"][key], rows["before"][key]) for key in rows["now"]}
    print(table([{"tree": tree, **row} for tree, row in rows.items()], ["tree", *rows["now"]]))
    print("now / before:", json.dumps(ratios))
    path = save("ranking_cost", {"documents": args.documents, **rows, "now_over_before": ratios},
                args.results)  # fmt: skip
    (args.results / "ranking_cost.json").write_text(path.read_text())
    print(f"saved {path}")


if __name__ == "__main__":
    main()
