"""What the approximate ranking ("bm25-pool") changes, against the exact one.

    python -m benchmarks.ranking [--documents 100000] [--crowded 20] [--repeats 3]

A demo world whose mix includes `--crowded` questions of the "crowded" case (the fact in the
most frequent of about 1,200 matching documents, a long one), besides the usual cases, is
indexed once with tantivy. Every question's token query (rule keywords, all aliases) is run
with the exact ranking (the default) and with "bm25-pool" (the 1,000 best matches by BM25,
ranked by frequency), and so are pairs of the corpus's most frequent words ("broad"):

- top-k1 overlap: the share of the exact first k1 documents that the approximation returns;
- label changes of Algorithm 1's token stage (k1 = 100) with the rules judge, and with a judge
  that accepts a fixed set of documents (2% of all ids, by a hash), so that a change of the
  judged documents shows as a change of label whatever they say;
- latency (p50/p95) of both rankings.

Writes results/ranking-<time>.json, and results/ranking.json and ranking.md (kept in git).
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import DEFAULT_WORKDIR, K1, RESULTS, corpus_files, keep, save, table
from benchmarks.token_index import broad_queries
from tipqa.core.jsonl import read_records
from tipqa.core.records import (
    JudgeRequest,
    Judgment,
    Keywords,
    Question,
    Relevance,
    TokenCandidates,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.llm.judges.rules import RuleJudge
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.sources.corpus.files import FileCorpus
from tipqa.sources.demo.world import DEFAULT_COUNTS, WorldSpec, write_world
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.windows import WindowSettings

ACCEPTED_PER_MILLE = 20
BROAD = 12


class FixedSetJudge:
    """Says "yes" to exactly the documents of a fixed set (2% of ids, chosen by a hash)."""

    name = "fixed-set"

    def close(self) -> None:
        """Nothing held."""

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request: yes when the document is in the set."""
        judgments = []
        for r in requests:
            label: Relevance = "yes" if accepted(r.doc_id) else "no"
            judgments.append(
                Judgment(r.question_id, r.stage, r.doc_id, r.unit_id, label, label, self.name)
            )
        return judgments


def accepted(doc_id: str) -> bool:
    """Membership of the fixed set."""
    return zlib.crc32(doc_id.encode()) % 1000 < ACCEPTED_PER_MILLE


def world(documents: int, crowded: int, workdir: Path) -> Path:
    """The world with crowded questions, written once."""
    factor = max(1, documents // 10_000)
    counts = {case: n * factor for case, n in DEFAULT_COUNTS.items()} | {"crowded": crowded}
    spec = WorldSpec(documents=documents, seed=16, counts=counts, files=4)
    folder = workdir / f"ranking-world-{documents}-{crowded}"
    if not (folder / "world.json").is_file():
        write_world(spec, folder)
    return folder


def labels(
    questions: list[Question],
    candidates: list[TokenCandidates],
    index: TantivyTokenIndex,
    judge: RelevanceJudge,
) -> dict[str, str]:
    """Token-stage labels of every question."""
    decisions, _ = judge_token_candidates(
        questions,
        {c.question_id: c for c in candidates},
        index.get,
        judge,
        K1,
        WindowSettings(),
        StepStats("judge"),
    )
    return {d.question_id: d.label for d in decisions}


def overlap(exact: TokenCandidates, approximate: TokenCandidates) -> float:
    """Share of the exact first k1 that the approximation also returns."""
    wanted = {h.doc_id for h in exact.hits}
    return len(wanted & {h.doc_id for h in approximate.hits}) / len(wanted) if wanted else 1.0


def latency(
    index: TantivyTokenIndex, asked: list[tuple[list[str], list[str]]], repeats: int
) -> dict[str, float]:
    """p50 / p95 milliseconds of `asked` on `index`."""
    times = []
    for _ in range(repeats):
        for keywords, aliases in asked:
            started = time.perf_counter()
            index.search(keywords, aliases, K1)
            times.append((time.perf_counter() - started) * 1000)
    return {f"p{q}_ms": round(float(np.percentile(times, q)), 2) for q in (50, 95)}


def run(folder: Path, workdir: Path, repeats: int) -> dict[str, Any]:
    """Every measurement on one world."""
    questions = read_records(folder / "questions.jsonl", Question)
    index = TantivyTokenIndex.at(workdir / f"ranking-index-{folder.name}")
    if not index.complete():
        index.build(iter(FileCorpus.of(corpus_files(folder), progress=False)))
    pooled = TantivyTokenIndex.at(index.path, ranking="bm25-pool")
    keywords = {q.id: Keywords(q.id, extract_keywords(q.text)) for q in questions}
    exact = search_tokens(questions, keywords, index, K1, StepStats("exact"))
    approx = search_tokens(questions, keywords, pooled, K1, StepStats("pool"))
    crowded = {c.question_id for c in exact if c.total > 1000}
    rows: list[dict[str, Any]] = []
    for judge in (RuleJudge(), FixedSetJudge()):
        a, b = labels(questions, exact, index, judge), labels(questions, approx, index, judge)
        for scope, ids in (("all", set(a)), ("above 1,000 matches", crowded)):
            changed = sorted(q for q in ids if a[q] != b[q])
            moves: dict[str, int] = {}
            for q in changed:
                moves[f"{a[q]} -> {b[q]}"] = moves.get(f"{a[q]} -> {b[q]}", 0) + 1
            rows.append(
                {
                    "judge": judge.name,
                    "questions": scope,
                    "count": len(ids),
                    "label_changes": len(changed),
                    "changes (exact -> approximate)": json.dumps(moves),
                }
            )
    shares = [overlap(e, p) for e, p in zip(exact, approx, strict=True) if e.question_id in crowded]
    files = corpus_files(folder)
    broad = broad_queries(files, BROAD)
    broad_overlap = [
        overlap(
            TokenCandidates("", kw, 0, index.search(kw, al, K1).hits),
            TokenCandidates("", kw, 0, pooled.search(kw, al, K1).hits),
        )
        for kw, al in broad
    ]
    asked = [(keywords[q.id].keywords, q.aliases) for q in questions]
    overlaps = [
        {
            "queries": "questions above 1,000 matches",
            "count": len(shares),
            "mean_overlap": round(float(np.mean(shares)), 3) if shares else None,
            "none_shared": sum(s == 0 for s in shares),
        },
        {
            "queries": "broad word pairs",
            "count": len(broad),
            "mean_overlap": round(float(np.mean(broad_overlap)), 3),
            "none_shared": sum(s == 0 for s in broad_overlap),
        },
    ]
    speed = [
        {"queries": name, "ranking": ranking, **latency(ix, items, repeats)}
        for name, items in (("questions", asked), ("broad", broad))
        for ranking, ix in (("exact", index), ("bm25-pool", pooled))
    ]
    return {"labels": rows, "overlap": overlaps, "latency": speed, "questions": len(questions)}


def main() -> None:
    """Build the world and the index once, measure, print, save."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--crowded", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    folder = world(args.documents, args.crowded, args.workdir)
    data = run(folder, args.workdir, args.repeats)
    parts = [
        table(
            data["labels"],
            ["judge", "questions", "count", "label_changes", "changes (exact -> approximate)"],
        ),
        table(data["overlap"], ["queries", "count", "mean_overlap", "none_shared"]),
        table(data["latency"], ["queries", "ranking", "p50_ms", "p95_ms"]),
    ]
    text = "\n\n".join(parts)
    print(text)
    path = save(
        "ranking", {"documents": args.documents, "crowded": args.crowded, **data}, args.results
    )
    keep(
        path,
        f"# Exact against approximate ranking ({args.documents:,} documents, "
        f"{data['questions']} questions)\n\n{text}\n",
    )


if __name__ == "__main__":
    main()
