"""Vector stage of Algorithm 1: the k2 nearest chunks of each question, all of them judged."""

from __future__ import annotations

from tqdm import tqdm

from tipqa.core.records import (
    Decision,
    Document,
    Evidence,
    JudgeRequest,
    Judgment,
    Keywords,
    Question,
    VectorCandidates,
    VectorHit,
    VectorInstance,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.token_index.base import FetchDocuments, TokenIndex
from tipqa.indexes.vector_index.base import EmbedsOnDemand, VectorIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.judging import Judges, as_judges


def search_vectors(
    questions: list[Question],
    embedder: Embedder,
    index: VectorIndex | EmbedsOnDemand,
    k2: int,
    stats: StepStats,
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


def chunk_offsets(document: Document | None, text: str) -> tuple[int | None, int | None]:
    """Where a chunk's text first occurs in its document, or (None, None) when it does not."""
    start = document.text.find(text) if document is not None and text else -1
    return (start, start + len(text)) if start >= 0 else (None, None)


def _located(
    questions: list[Question],
    candidates: dict[str, VectorCandidates],
    fetch: FetchDocuments | None,
    stats: StepStats,
) -> dict[tuple[str, str], tuple[int | None, int | None]]:
    """The character offsets of every hit's chunk in its document (fetched once each)."""
    hits = [hit for q in questions for hit in candidates[q.id].hits]
    if fetch is None or not hits:
        return {}
    documents = fetch(sorted({hit.doc_id for hit in hits}))
    offsets = {}
    for hit in hits:
        found = chunk_offsets(documents.get(hit.doc_id), hit.text)
        offsets[(hit.doc_id, hit.chunk_id)] = found
        stats.add("chunks_located" if found[0] is not None else "chunks_not_located")
    return offsets


def judge_vector_candidates(
    questions: list[Question],
    candidates: dict[str, VectorCandidates],
    keywords: dict[str, Keywords],
    judges: RelevanceJudge | Judges,
    stats: StepStats,
    fetch: FetchDocuments | None = None,
) -> tuple[list[Decision], list[Judgment], list[VectorInstance]]:
    """Judge every retrieved chunk; record each (q, a, d, r) instance and decide.

    With `fetch` (the token index's documents), each chunk's character offsets in its
    document go with its judgment. With a confirming judge, a chunk counts only where it says
    yes too.
    """
    offsets = _located(questions, candidates, fetch, stats)
    unknown = (None, None)
    requests = [
        JudgeRequest.for_unit(
            q,
            keywords[q.id].keywords,
            "vector",
            hit.doc_id,
            hit.chunk_id,
            hit.text,
            offsets.get((hit.doc_id, hit.chunk_id), unknown),
        )
        for q in questions
        for hit in candidates[q.id].hits
    ]
    judgments = as_judges(judges).judge_batch(requests, stats)
    by_question: dict[str, list[Judgment]] = {q.id: [] for q in questions}
    for judgment in judgments:
        by_question[judgment.question_id].append(judgment)
    instances = []
    decisions = []
    for q in questions:
        results = by_question[q.id]
        hits = candidates[q.id].hits
        for hit, result in zip(hits, results, strict=True):
            relevant = None if result.failed else result.verdict == "yes"
            instances.append(
                VectorInstance(
                    q.id,
                    q.text,
                    q.answer,
                    hit.doc_id,
                    hit.chunk_id,
                    hit.text,
                    hit.score,
                    relevant,
                    result.confirmation,
                )
            )
        decision = _decide(q, hits, results)
        stats.add(f"outcome_{decision.label}")
        decisions.append(decision)
    return decisions, judgments, instances


def _decide(question: Question, hits: list[VectorHit], results: list[Judgment]) -> Decision:
    """Any "yes": answerable; else a failure makes it undetermined; else unanswerable."""
    for hit, result in zip(hits, results, strict=True):
        if result.verdict == "yes":
            evidence = Evidence("vector", hit.doc_id, hit.chunk_id, hit.text, result.confirmation)
            reason = "a vector-search chunk was judged relevant"
            return Decision(question.id, "answerable", "vector", reason, evidence, None, len(hits))
    failed = [r for r in results if r.failed]
    if failed:
        errors = "; ".join(sorted({r.failure for r in failed}))
        reason = f"{len(failed)} of {len(results)} judgment(s) failed: {errors}"
        return Decision(question.id, "undetermined", "vector", reason, None, None, len(hits))
    reason = f"none of the {len(hits)} nearest chunks judged relevant"
    return Decision(question.id, "unanswerable", "vector", reason, None, None, len(hits))
