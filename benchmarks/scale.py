"""Growth of the token index with corpus size, against Lucene 8 and against reading alone.

    python -m benchmarks.scale [--sizes 10000 100000 1000000] [--huge] [--threads N]
                               [--recount] [--no-lucene] [--pure-python] [--repeats 3]

For each size (demo worlds of N documents; `--huge` adds 10,000,000, token index only,
about 4.7 GB of text and 8 GB of indexes), each in its own process: reading and parsing the
files (the limit of any build); the same plus our Python analysis of every text
(`tantivy_analysis.analyse`: the prepared text and the `repeats` terms; the rest of a
one-writer build's CPU is tantivy's indexing, so these rows say where a build's time goes);
the tantivy build with one worker and with `--threads` (all cores by default); Lucene 8
(`benchmarks/lucene`: our analyzer, positions, stored text) with one and `--threads`
indexing threads. For each: wall and CPU seconds, documents/s and MB/s, the same per core
(divided by the CPU seconds, which holds on a shared machine), peak memory of the process
tree, index size. Then Algorithm 1's query (all keywords AND any alias, as phrases, exact
total, first k1 = 100 by frequency, ties by id) on the world's questions ("entity") and on
pairs of the corpus's most frequent words ("broad"): p50/p95/p99 of wall time and of the
querying thread's CPU time for tantivy (exact ranking, the default), tantivy "bm25-pool"
(the approximate ranking) and Lucene, whose results must equal tantivy's on every query.
`--pure-python` adds the analysis, a one-worker build and the queries without the C speed-ups
(`tipqa.indexes.token_index.speedups`). `--recount` adds an exact recount (bm25-pool with a
pool of 10^7) on three broad queries (not at the huge size). Finally the slope of every
figure against size on log-log axes (1 = linear).
Writes results/scale-<time>.json, and results/scale.json and scale.md (kept in git).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    K1,
    RESULTS,
    corpus_files,
    ensure_world,
    keep,
    save,
    table,
)
from benchmarks.lucene import Lucene, available
from benchmarks.scale_report import markdown, slopes, targets
from benchmarks.token_index import broad_queries, name_queries
from tipqa.indexes.token_index import speedups
from tipqa.indexes.token_index.speedups import PURE_PYTHON
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.indexes.token_index.tantivy_build import available_cores

HUGE = 10_000_000
BROAD = 30
RECOUNT_QUERIES = 3
PYTHON_ROW = " (pure Python)"  # rows measured without the C speed-ups (`--pure-python`)


def _descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def _tree_rss_mib(pid: int) -> float:
    """Resident memory of a process tree, in MiB."""
    total = 0
    for member in _descendants(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `command`; its wall and CPU seconds, peak tree memory and last stdout line."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree_rss_mib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert process.stdout is not None
    output = process.stdout.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed with exit code {process.returncode}")
    return {
        "wall_s": round(time.perf_counter() - started, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_mib": round(peak[0]),
        "output": output.strip().splitlines()[-1] if output.strip() else "",
    }


def _rates(row: dict[str, Any], documents: int, text_bytes: int) -> dict[str, Any]:
    """Documents/s and MB/s, by wall time and per core (per CPU second)."""
    mb = text_bytes / 1e6
    row.update(
        documents=documents,
        text_mb=round(mb, 1),
        docs_per_s=round(documents / row["wall_s"]),
        mb_per_s=round(mb / row["wall_s"], 1),
        docs_per_core_s=round(documents / row["cpu_s"]),
        mb_per_core_s=round(mb / row["cpu_s"], 1),
        cores_used=round(row["cpu_s"] / row["wall_s"], 2),
    )
    return row


def _folder_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 1)


def builds(
    files: list[Path], scratch: Path, threads: int, with_lucene: bool, pure_python: bool
) -> list[dict]:
    """Read+parse, tantivy and Lucene builds, each measured in its own process."""
    me = [sys.executable, "-m", "benchmarks.scale"]
    read = measure([*me, "read", *map(str, files)])
    documents, text_bytes = json.loads(read["output"])
    rows = [_rates({"method": "read+parse", "threads": 1, **read}, documents, text_bytes)]
    python = {**os.environ, PURE_PYTHON: "1"}
    for suffix, env in [("", None), *([(PYTHON_ROW, python)] if pure_python else [])]:
        analysed = measure([*me, "analyse", *map(str, files)], env)
        row = {"method": "read+parse+analyse" + suffix, "threads": 1, **analysed}
        rows.append(_rates(row, documents, text_bytes))
    runs = [(count, "", None) for count in sorted({1, threads})]
    for count, suffix, env in [*runs, *([(1, PYTHON_ROW, python)] if pure_python else [])]:
        folder = scratch / (f"tantivy-{count}" + ("-python" if env else ""))
        run = measure([*me, "tantivy", str(folder), str(count), *map(str, files)], env)
        counts = json.loads(run["output"])
        row = {"method": "tantivy" + suffix, "threads": count, **run}
        row["index_mb"] = _folder_mb(folder)
        rows.append(_rates(row, int(counts["documents"]), int(counts["bytes"])))
    if with_lucene:
        program = Lucene(scratch)
        for count in sorted({1, threads}):
            folder = scratch / f"lucene-{count}"
            shutil.rmtree(folder, ignore_errors=True)
            run = measure(program.index_command(folder, files, count))
            indexed, lucene_bytes, _ = run["output"].split()
            row = {"method": "lucene", "threads": count, **run, "index_mb": _folder_mb(folder)}
            rows.append(_rates(row, int(indexed), int(lucene_bytes)))
    for row in rows:
        row.pop("output")
    return rows


def _percentiles(times: list[tuple[float, float]]) -> dict[str, float]:
    """p50/p95/p99 of wall milliseconds, and of CPU milliseconds of the querying thread."""
    values = np.asarray(times)
    out = {}
    for column, prefix in ((0, "p"), (1, "cpu_p")):
        for q in (50, 95, 99):
            out[f"{prefix}{q}_ms"] = round(float(np.percentile(values[:, column], q)), 3)
    return out


def _row(name: str, engine: str, matches: int, times: list[tuple[float, float]]) -> dict:
    """A latency row."""
    return {
        "set": name,
        "engine": engine,
        "median_matches": matches,
        "queries_timed": len(times),
        **_percentiles(times),
    }


def _timed(
    index: TantivyTokenIndex, keywords: list[str], aliases: list[str]
) -> tuple[float, float]:
    """Wall and CPU milliseconds of one query (tantivy searches in the calling thread)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    index.search(keywords, aliases, K1)
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def searches(
    world: Path,
    files: list[Path],
    scratch: Path,
    threads: int,
    repeats: int,
    options: Any,
    recount: bool,
) -> list[dict]:
    """Latency of each engine on each query set; Lucene's results must equal tantivy's."""
    exact = TantivyTokenIndex.at(scratch / f"tantivy-{threads}")
    pooled = TantivyTokenIndex.at(exact.path, ranking="bm25-pool")
    sets = {"entity": name_queries(world), "broad": broad_queries(files, BROAD)}
    rows = []
    for name, asked in sets.items():
        asked = [(kw, al) for kw, al in asked if any(a.strip() for a in al)]
        mine = [exact.search(kw, al, K1) for kw, al in asked]
        matches = sorted(r.total for r in mine)[len(mine) // 2]
        engines = [("tantivy", exact, False), ("tantivy bm25-pool", pooled, False)]
        if options.pure_python:
            engines.append(("tantivy" + PYTHON_ROW, exact, True))
        for engine, index, python in engines:
            times = []
            with pure_python(python):
                for _ in range(repeats):
                    for kw, al in asked:
                        times.append(_timed(index, kw, al))
            rows.append(_row(name, engine, matches, times))
        if options.lucene:
            results, timings = Lucene(scratch).search(
                scratch / f"lucene-{threads}", asked, K1, repeats
            )
            for (kw, al), theirs, ours in zip(asked, results, mine, strict=True):
                if theirs != ours:
                    raise AssertionError(f"Lucene and tantivy differ on {kw} / {al}")
            rows.append(_row(name, "lucene", matches, timings))
        if recount and name == "broad":
            recounting = TantivyTokenIndex.at(exact.path, ranking="bm25-pool", rank_pool=10**7)
            times = []
            for kw, al in asked[:RECOUNT_QUERIES]:
                times.append(_timed(recounting, kw, al))
                assert recounting.search(kw, al, K1) == exact.search(kw, al, K1)
            rows.append(_row(name, "recount (pool 10^7)", matches, times))
    return rows


@contextmanager
def pure_python(on: bool) -> Iterator[None]:
    """Within the block, new phrase counters use the Python code, not the C speed-ups."""
    if not on:
        yield
        return
    before = os.environ.get(PURE_PYTHON)
    os.environ[PURE_PYTHON] = "1"
    speedups.native.cache_clear()
    try:
        yield
    finally:
        if before is None:
            del os.environ[PURE_PYTHON]
        else:
            os.environ[PURE_PYTHON] = before
        speedups.native.cache_clear()


def child(mode: str, args: list[str]) -> None:
    """The measured processes: read the files, or build a tantivy index."""
    from tipqa.sources.corpus.files import FileCorpus

    if mode == "read":
        corpus = FileCorpus.of([Path(a) for a in args], progress=False)
        print(json.dumps([sum(1 for _ in corpus), corpus.stats.counts["text_bytes"]]))
        return
    if mode == "analyse":  # read+parse, then tantivy_analysis.analyse of every text
        from tipqa.indexes.token_index.tantivy_analysis import analyse, tokenization

        blank = tokenization().blank
        corpus = FileCorpus.of([Path(a) for a in args], progress=False)
        documents = sum(1 for d in corpus if d.text.strip() and analyse(d.text, blank))
        print(json.dumps([documents, corpus.stats.counts["text_bytes"]]))
        return
    folder, threads, files = Path(args[0]), int(args[1]), [Path(a) for a in args[2:]]
    index = TantivyTokenIndex.at(folder, threads=threads)
    print(json.dumps(index.build(iter(FileCorpus.of(files, progress=False)))))


def main() -> None:
    """Run every size, print the tables, save JSON and Markdown."""
    import argparse

    if len(sys.argv) > 1 and sys.argv[1] in ("read", "analyse", "tantivy"):
        child(sys.argv[1], sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--huge", action="store_true", help=f"add {HUGE:,} documents")
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--recount", action="store_true")
    parser.add_argument("--no-lucene", dest="lucene", action="store_false")
    parser.add_argument(
        "--pure-python", action="store_true", help="add rows without the C speed-ups"
    )
    parser.add_argument(
        "--workdir", type=Path, default=Path(os.environ.get("TIPQA_BENCH_DIR", "/tmp/tipqa-bench"))
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    options = parser.parse_args()
    if options.lucene and not available():
        parser.error("Lucene needs java, javac and liblucene8-java (or pass --no-lucene)")
    sizes = [*options.sizes, *([HUGE] if options.huge else [])]
    started = time.perf_counter()
    results: dict[str, dict] = {}
    for size in sizes:
        world = ensure_world(size, options.workdir)
        files = corpus_files(world)
        scratch = options.workdir / f"scale-{size}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        data: dict[str, Any] = {
            "build": builds(files, scratch, options.threads, options.lucene, options.pure_python)
        }
        # the recount reads every match's stored text: millions per broad query at the huge size
        recount = options.recount and size < HUGE
        data["search"] = searches(
            world, files, scratch, options.threads, options.repeats, options, recount
        )
        data["targets"] = targets(data)
        results[str(size)] = data
        print(
            table(
                data["build"],
                ["method", "threads", "wall_s", "cpu_s", "mb_per_core_s", "peak_mib", "index_mb"],
            )
        )
        print(
            table(data["search"], ["set", "engine", "median_matches", "p50_ms", "p95_ms", "p99_ms"])
        )
        shutil.rmtree(scratch, ignore_errors=True)
    payload = {
        "sizes": results,
        "slopes": slopes(results),
        "minutes": round((time.perf_counter() - started) / 60, 1),
    }
    path = save("scale", payload, options.results)
    report = markdown(json.loads(path.read_text()))
    print(report)
    keep(path, report)


if __name__ == "__main__":
    main()
