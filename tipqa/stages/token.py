"""Token stage of Algorithm 1: keyword search, then judging the first k1 hits.

Judging runs in rounds across all unresolved questions of a shard: round r sends the r-th
ranked candidate of every question still open, and a question leaves at its first "yes".
The labels equal those of judging every candidate (a "yes" anywhere makes a question
answerable; otherwise only the failures and the total count matter), with far fewer calls.
`judge_all` turns the early exit off when every relevant document is wanted.
"""

from __future__ import annotations

from tqdm import tqdm

from tipqa.core.records import (
    Decision,
    Document,
    Evidence,
    JudgeRequest,
    Judgment,
    Keywords,
    Outcome,
    Question,
    TokenCandidates,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments, TokenIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.windows import WindowSettings, judge_windows


def search_tokens(
    questions: list[Question],
    keywords: dict[str, Keywords],
    index: TokenIndex,
    k1: int,
    stats: StepStats,
) -> list[TokenCandidates]:
    """Run the token query of every question; keep the first k1 hits and the total."""
    out = []
    for question in tqdm(questions, desc="token search", unit="q", leave=False):
        kws = keywords[question.id].keywords
        result = index.search(kws, question.aliases, k1)
        stats.add("questions")
        stats.add("hits_returned", len(result.hits))
        stats.add("over_k1" if result.total > k1 else "within_k1")
        if result.total == 0:
            stats.add("no_match")
        out.append(TokenCandidates(question.id, kws, result.total, result.hits))
    return out


def _requests(
    question: Question, keywords: list[str], document: Document, windows: WindowSettings
) -> tuple[list[JudgeRequest], bool]:
    found, truncated = judge_windows(document, keywords, question.aliases, windows)
    requests = [
        JudgeRequest(
            question_id=question.id,
            question=question.text,
            answer=question.answer,
            aliases=question.aliases,
            keywords=keywords,
            stage="token",
            doc_id=document.id,
            unit_id=f"{document.id}@w{w.index}",
            text=w.text,
            start=w.start,
            end=w.end,
        )
        for w in found
    ]
    return requests, truncated


def _missing(question: Question, doc_id: str) -> Judgment:
    return Judgment(
        question.id, "token", doc_id, doc_id, None, "", "index", error="missing_document"
    )


def judge_token_candidates(
    questions: list[Question],
    candidates: dict[str, TokenCandidates],
    fetch: FetchDocuments,
    judge: RelevanceJudge,
    k1: int,
    windows: WindowSettings,
    stats: StepStats,
    *,
    judge_all: bool = False,
) -> tuple[list[Decision], list[Judgment]]:
    """Judge candidates in rank order with early exit; return decisions and every judgment.

    With `judge_all`, a question is not left at its first "yes": all of its first k1
    candidates are judged (to know every relevant document, e.g. for the first training step
    that saw one). Labels and evidence stay those of early exit: the evidence is the first
    "yes" in rank order.
    """
    by_id = {q.id: q for q in questions}
    evidence: dict[str, Evidence] = {}
    failures: dict[str, list[str]] = {q.id: [] for q in questions}
    judged: dict[str, int] = {q.id: 0 for q in questions}
    judgments: list[Judgment] = []
    depth = min(k1, max((len(c.hits) for c in candidates.values()), default=0))
    for rank in tqdm(range(depth), desc="token judging rounds", leave=False):
        open_ids = [
            qid
            for qid in by_id
            if (judge_all or qid not in evidence) and rank < min(k1, len(candidates[qid].hits))
        ]
        if not open_ids:
            break
        if judge_all:
            stats.add("documents_judged_after_a_yes", sum(qid in evidence for qid in open_ids))
        doc_ids = [candidates[qid].hits[rank].doc_id for qid in open_ids]
        documents = fetch(sorted(set(doc_ids)))
        requests: list[JudgeRequest] = []
        for qid, doc_id in zip(open_ids, doc_ids, strict=True):
            judged[qid] += 1
            if doc_id not in documents:
                judgments.append(_missing(by_id[qid], doc_id))
                failures[qid].append(f"{doc_id}: missing_document")
                stats.error("missing_document")
                continue
            reqs, truncated = _requests(
                by_id[qid], candidates[qid].keywords, documents[doc_id], windows
            )
            stats.add("windows_truncated", int(truncated))
            requests.extend(reqs)
        stats.add("documents_judged", len(open_ids))
        stats.add("prompts", len(requests))
        results = judge.judge(requests) if requests else []
        judgments.extend(results)
        _apply_round(requests, results, evidence, failures, stats)
    decisions = [
        _decide(q, candidates[q.id], k1, evidence.get(q.id), failures[q.id], judged[q.id])
        for q in questions
    ]
    for decision in decisions:
        stats.add(f"outcome_{decision.label}")
    reachable = sum(min(k1, len(candidates[q.id].hits)) for q in questions)
    stats.add("documents_skipped_by_early_exit", reachable - sum(judged.values()))
    return decisions, judgments


def _apply_round(
    requests: list[JudgeRequest],
    results: list[Judgment],
    evidence: dict[str, Evidence],
    failures: dict[str, list[str]],
    stats: StepStats,
) -> None:
    """Record the round's first "yes" per question and the documents that failed."""
    verdicts: dict[tuple[str, str], list[Judgment]] = {}
    for request, result in zip(requests, results, strict=True):
        verdicts.setdefault((request.question_id, request.doc_id), []).append(result)
        if result.failed:
            stats.error(f"judgment_{(result.error or 'failed').split(':')[0]}")
        if result.label == "yes" and request.question_id not in evidence:
            evidence[request.question_id] = Evidence(
                "token", request.doc_id, request.unit_id, request.text
            )
    for (qid, doc_id), doc_results in verdicts.items():
        if qid not in evidence and any(r.failed for r in doc_results):
            errors = sorted({r.error or "failed" for r in doc_results if r.failed})
            failures[qid].append(f"{doc_id}: {'; '.join(errors)}")


def _decide(
    question: Question,
    candidates: TokenCandidates,
    k1: int,
    evidence: Evidence | None,
    failures: list[str],
    judged: int,
) -> Decision:
    """Algorithm 1's token-stage rule, with failed judgments kept apart from "no"."""
    total = candidates.total
    label: Outcome
    if evidence is not None:
        label, reason = "answerable", "a token-search document was judged relevant"
    elif failures:
        label = "undetermined"
        reason = f"{len(failures)} judgment(s) failed: " + " | ".join(failures[:5])
    elif total > k1:
        label, reason = "discarded", f"all {k1} judged documents irrelevant, {total} matched"
    elif total == 0:
        label, reason = "to_vector", "no document contains the keywords and an alias"
    else:
        label, reason = "to_vector", f"all {total} matching documents judged irrelevant"
    return Decision(question.id, label, "token", reason, evidence, total, judged)
