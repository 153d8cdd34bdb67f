"""Vector stage of Algorithm 1: the k2 nearest chunks of each question, all of them judged."""

from __future__ import annotations

from tqdm import tqdm

from tipqa.embedders.base import Embedder
from tipqa.judges.base import RelevanceJudge
from tipqa.records import (
    Decision,
    Evidence,
    JudgeRequest,
    Judgment,
    Keywords,
    Question,
    VectorCandidates,
    VectorHit,
    VectorInstance,
)
from tipqa.stats import StageStats
from tipqa.token_index.base import TokenIndex
from tipqa.vector_index.base import EmbedsOnDemand, VectorIndex


def search_vectors(
    questions: list[Question],
    embedder: Embedder,
    index: VectorIndex | EmbedsOnDemand,
    k2: int,
    stats: StageStats,
    batch_size: int = 64,
    token_index: TokenIndex | None = None,
) -> list[VectorCandidates]:
    """Embed the questions (query prefix included) and fetch their k2 nearest chunks.

    A stage that embeds on demand searches among the chunks of each question's candidates
    from `token_index`.
    """
    if isinstance(index, EmbedsOnDemand):
        if token_index is None:
            raise ValueError("a vector stage that embeds on demand needs the token index")
        return index.search_questions(questions, token_index, embedder, k2, stats)
    out: list[VectorCandidates] = []
    for start in tqdm(range(0, len(questions), batch_size), desc="vector search", leave=False):
        batch = questions[start : start + batch_size]
        vectors = embedder.encode_queries([q.text for q in batch])
        for question, hits in zip(batch, index.search(vectors, k2), strict=True):
            out.append(VectorCandidates(question.id, hits))
            stats.add("questions")
            stats.add("hits_returned", len(hits))
    return out


def judge_vector_candidates(
    questions: list[Question],
    candidates: dict[str, VectorCandidates],
    keywords: dict[str, Keywords],
    judge: RelevanceJudge,
    stats: StageStats,
) -> tuple[list[Decision], list[Judgment], list[VectorInstance]]:
    """Judge every retrieved chunk; record each (q, a, d, r) instance and decide."""
    requests = [
        JudgeRequest(
            question_id=q.id,
            question=q.text,
            answer=q.answer,
            aliases=q.aliases,
            keywords=keywords[q.id].keywords,
            stage="vector",
            doc_id=hit.doc_id,
            unit_id=hit.chunk_id,
            text=hit.text,
        )
        for q in questions
        for hit in candidates[q.id].hits
    ]
    stats.add("prompts", len(requests))
    judgments = judge.judge(requests) if requests else []
    by_question: dict[str, list[Judgment]] = {q.id: [] for q in questions}
    for judgment in judgments:
        by_question[judgment.question_id].append(judgment)
        if judgment.failed:
            stats.error(f"judgment_{(judgment.error or 'failed').split(':')[0]}")
    instances = []
    decisions = []
    for q in questions:
        results = by_question[q.id]
        hits = candidates[q.id].hits
        for hit, result in zip(hits, results, strict=True):
            relevant = None if result.failed else result.label == "yes"
            instances.append(
                VectorInstance(
                    q.id, q.text, q.answer, hit.doc_id, hit.chunk_id, hit.text, hit.score, relevant
                )
            )
        decision = _decide(q, hits, results)
        stats.add(f"outcome_{decision.label}")
        decisions.append(decision)
    return decisions, judgments, instances


def _decide(question: Question, hits: list[VectorHit], results: list[Judgment]) -> Decision:
    """Any "yes": answerable; else a failure makes it undetermined; else unanswerable."""
    for hit, result in zip(hits, results, strict=True):
        if result.label == "yes":
            evidence = Evidence("vector", hit.doc_id, hit.chunk_id, hit.text)
            reason = "a vector-search chunk was judged relevant"
            return Decision(question.id, "answerable", "vector", reason, evidence, None, len(hits))
    failed = [r for r in results if r.failed]
    if failed:
        errors = "; ".join(sorted({r.error or "failed" for r in failed}))
        reason = f"{len(failed)} of {len(results)} judgment(s) failed: {errors}"
        return Decision(question.id, "undetermined", "vector", reason, None, None, len(hits))
    reason = f"none of the {len(hits)} nearest chunks judged relevant"
    return Decision(question.id, "unanswerable", "vector", reason, None, None, len(hits))
