"""Recall@k of a retrieval system's TREC run file against a build's qrels (`tipqa.dataset.qrels`).

A run file has one line `question_id Q0 doc_id rank score tag` per retrieved document. Each
question's documents are ranked by score, highest first, as `trec_eval` does (ties by the rank
column, then by order in the file); a document listed twice for a question keeps its best
place (counted). Recall@k of a question with at least one relevant document is
|relevant ∩ top k| / |relevant|; the reported value is the macro average over those
questions, a question the run has no line for counting as 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.trec import trec_lines, trec_number
from tipqa.dataset.qrels import Qrels

Run = dict[str, list[str]]
RUN_FIELDS = ("qid", "Q0", "doc_id", "rank", "score", "tag")


def read_run(path: Path, counts: Counter[str] | None = None) -> Run:
    """Each question's retrieved documents, best first; bad lines are an InputError."""
    counts = Counter() if counts is None else counts
    entries: dict[str, list[tuple[float, int, int, str]]] = {}
    for number, (qid, _, doc_id, rank, score, _) in trec_lines(path, "run", RUN_FIELDS):
        place = trec_number(rank, int, "rank", path, number, "a number")
        value = trec_number(score, float, "score", path, number, "a number")
        entries.setdefault(qid, []).append((-value, place, number, doc_id))
    run: Run = {}
    for qid, found in entries.items():
        ranked: list[str] = []
        seen: set[str] = set()
        for *_, doc_id in sorted(found):
            if doc_id in seen:
                counts["duplicate_documents"] += 1
                continue
            seen.add(doc_id)
            ranked.append(doc_id)
        run[qid] = ranked
    return run


def write_run(path: Path, run: Run, tag: str = "tipqa") -> None:
    """Write `run` as a TREC run file (rank from 1, score decreasing with rank)."""
    with open(path, "w", encoding="utf-8") as handle:
        for qid, docs in run.items():
            for rank, doc_id in enumerate(docs, 1):
                handle.write(f"{qid} Q0 {doc_id} {rank} {len(docs) - rank + 1} {tag}\n")


def recall_at_k(qrels: Qrels, run: Run, ks: Sequence[int]) -> dict[str, Any]:
    """Macro recall@k for each k over the questions with a relevant document, and the counts."""
    if not ks or any(k < 1 for k in ks):
        raise InputError(f"k must be one or more positive integers, got {list(ks)}")
    relevant = {qid: {d for d, r in docs.items() if r > 0} for qid, docs in qrels.items()}
    counted = {qid: docs for qid, docs in relevant.items() if docs}
    totals = dict.fromkeys(ks, 0.0)
    for qid, docs in counted.items():
        ranked = run.get(qid, [])
        for k in ks:
            totals[k] += len(docs.intersection(ranked[:k])) / len(docs)
    n = len(counted)
    return {
        "recall": {f"@{k}": (totals[k] / n if n else None) for k in ks},
        "questions": n,
        "questions_without_relevant": len(relevant) - n,
        "questions_not_in_run": sum(qid not in run for qid in counted),
        "run_questions_not_in_qrels": sum(qid not in qrels for qid in run),
        "relevant_documents": sum(len(docs) for docs in counted.values()),
    }
