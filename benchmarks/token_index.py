"""Token index: build rate and search latency of tantivy, against reading alone and SQLite FTS5.

    python -m benchmarks.token_index [--sizes 10000 100000] [--large]

Build: documents/s and MB/s of text for (a) merely reading and parsing the corpus files
(`FileCorpus`, the limit), (b) `TantivyTokenIndex.build`, (c) SQLite FTS5 (stdlib) indexing the
same documents. Search: p50/p95 of Algorithm 1's query (every keyword AND any alias, as phrases,
exact total, first k1 ranked by frequency) on the world's questions ("names") and on pairs of the
corpus's most frequent words ("broad"), for tantivy and for FTS5 answering the same query with
the same ranking; the totals are asserted equal.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter
from itertools import islice
from pathlib import Path
from typing import Any

from benchmarks.common import (
    K1,
    arguments,
    corpus_files,
    ensure_world,
    latencies,
    ratio,
    save,
    stopwatch,
    table,
    world_questions,
)
from tipqa.core.text import tokenize
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex, frequency
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.sources.corpus.files import FileCorpus

FTS_BATCH = 2000
RANK_POOL = 1000


def read_only(files: list[Path]) -> dict[str, float]:
    """Seconds to read and parse every document, with documents and bytes of text."""
    corpus = FileCorpus.of(files, progress=False)
    with stopwatch() as clock:
        documents = sum(1 for _ in corpus)
    return _rates("read+parse", documents, corpus.stats.counts["text_bytes"], clock["seconds"])


def _rates(name: str, documents: int, text_bytes: float, seconds: float) -> dict[str, Any]:
    """A build row: documents/s and MB/s."""
    return {
        "method": name,
        "documents": documents,
        "text_mb": round(text_bytes / 1e6, 1),
        "seconds": round(seconds, 2),
        "docs_per_s": round(documents / seconds),
        "mb_per_s": round(text_bytes / 1e6 / seconds, 1),
    }


def build_tantivy(files: list[Path], folder: Path) -> tuple[TantivyTokenIndex, dict[str, Any]]:
    """Build the tantivy index as the pipeline does (default heap and threads)."""
    index = TantivyTokenIndex.at(folder)
    corpus = FileCorpus.of(files, progress=False)
    with stopwatch() as clock:
        counts = index.build(iter(corpus))
    return index, _rates("tantivy", int(counts["documents"]), counts["bytes"], clock["seconds"])


def build_fts5(files: list[Path], path: Path) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """Index the same documents in an SQLite FTS5 table (text stored, ids unindexed)."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, body, "
        "tokenize='unicode61 remove_diacritics 0')"
    )
    corpus = FileCorpus.of(files, progress=False)
    documents = 0
    text_bytes = 0
    with stopwatch() as clock:
        stream = iter(corpus)
        while batch := list(islice(stream, FTS_BATCH)):
            db.executemany("INSERT INTO docs VALUES (?, ?)", [(d.id, d.text) for d in batch])
            documents += len(batch)
            text_bytes += sum(len(d.text.encode()) for d in batch)
        db.commit()
        db.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        db.commit()
    return db, _rates("sqlite-fts5", documents, text_bytes, clock["seconds"])


def fts5_query(keywords: list[str], aliases: list[str]) -> str | None:
    """The FTS5 query string: every keyword phrase AND (any alias phrase)."""
    phrases = [" ".join(tokenize(a)) for a in aliases]
    alias_part = " OR ".join(f'"{p}"' for p in dict.fromkeys(phrases) if p)
    if not alias_part:
        return None
    parts = [f'"{" ".join(tokenize(k))}"' for k in keywords if tokenize(k)]
    return " AND ".join([*parts, f"({alias_part})"])


def fts5_search(db: sqlite3.Connection, keywords: list[str], aliases: list[str], k: int):
    """The same semantics with FTS5: exact count, best RANK_POOL by bm25 ranked by frequency."""
    query = fts5_query(keywords, aliases)
    if query is None:
        return 0, []
    total = db.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (query,)).fetchone()[0]
    rows = db.execute(
        "SELECT doc_id, body FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?",
        (query, RANK_POOL),
    ).fetchall()
    phrases = list(
        dict.fromkeys(p for p in (tuple(tokenize(t)) for t in [*keywords, *aliases]) if p)
    )
    scored = sorted((-frequency(text, phrases), doc_id) for doc_id, text in rows)
    return total, [doc_id for _, doc_id in scored[:k]]


def name_queries(world: Path) -> list[tuple[list[str], list[str]]]:
    """Algorithm 1's query of every world question (rule keywords, all aliases)."""
    return [(extract_keywords(q.text), q.aliases) for q in world_questions(world)]


def broad_queries(files: list[Path], count: int = 30) -> list[tuple[list[str], list[str]]]:
    """Pairs of the most frequent words of the first documents: thousands of matches each."""
    words: Counter[str] = Counter()
    for document in islice(iter(FileCorpus.of(files, progress=False)), 2000):
        words.update(t for t in tokenize(document.text) if len(t) > 3)
    top = [w for w, _ in words.most_common(count + 1)]
    return [([top[i]], [top[i + 1]]) for i in range(count)]


def search_rows(
    index: TantivyTokenIndex, db: sqlite3.Connection, queries: dict[str, list], repeats: int
) -> list[dict[str, Any]]:
    """Latency rows per query set and engine; totals (and hits within the pool) must agree."""
    rows = []
    for kind, items in queries.items():
        for keywords, aliases in items:
            mine = index.search(keywords, aliases, K1)
            total, hits = fts5_search(db, keywords, aliases, K1)
            assert mine.total == total, (keywords, aliases, mine.total, total)
            if total <= RANK_POOL:
                assert [h.doc_id for h in mine.hits] == hits, (keywords, aliases)
        matches = [index.search(k, a, K1).total for k, a in items]
        for engine, run in (
            ("tantivy", lambda q: index.search(q[0], q[1], K1)),
            ("sqlite-fts5", lambda q: fts5_search(db, q[0], q[1], K1)),
        ):
            row = {"set": kind, "engine": engine, **latencies(run, items, repeats)}
            row["median_matches"] = sorted(matches)[len(matches) // 2]
            rows.append(row)
    return rows


def run_size(size: int, workdir: Path, repeats: int) -> dict[str, Any]:
    """Every measurement at one corpus size."""
    world = ensure_world(size, workdir)
    files = corpus_files(world)
    scratch = workdir / f"token-{size}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    builds = [read_only(files)]
    index, tantivy_row = build_tantivy(files, scratch / "tantivy")
    db, fts_row = build_fts5(files, scratch / "fts5.sqlite3")
    builds += [tantivy_row, fts_row]
    for row in builds:
        row["size"] = size
    queries = {"names": name_queries(world), "broad": broad_queries(files)}
    searches = search_rows(index, db, queries, repeats)
    for row in searches:
        row["size"] = size
    db.close()
    shutil.rmtree(scratch, ignore_errors=True)
    return {
        "build": builds,
        "search": searches,
        "ratios": {
            "tantivy_vs_fts5_build": ratio(tantivy_row["docs_per_s"], fts_row["docs_per_s"]),
            "tantivy_vs_read_build": ratio(tantivy_row["docs_per_s"], builds[0]["docs_per_s"]),
        },
    }


def main() -> None:
    """Run every size, print the tables, save the JSON."""
    args = arguments(
        __doc__.splitlines()[0], lambda p: p.add_argument("--repeats", type=int, default=5)
    )
    sizes = {str(size): run_size(size, args.workdir, args.repeats) for size in args.sizes}
    build_rows = [row for s in sizes.values() for row in s["build"]]
    search_rows_ = [row for s in sizes.values() for row in s["search"]]
    print(
        table(
            build_rows,
            ["size", "method", "documents", "text_mb", "seconds", "docs_per_s", "mb_per_s"],
        )
    )
    print()
    print(
        table(
            search_rows_,
            ["size", "set", "queries", "engine", "median_matches", "p50_ms", "p95_ms", "mean_ms"],
        )
    )
    print("saved", save("token_index", {"sizes": sizes}, args.results))


if __name__ == "__main__":
    main()
