"""One function per step of a build: read the step's inputs, run the stage, write its outputs.

These are what the Luigi tasks call. Each writes its data files atomically and its stats file
last, with the step's provenance (`tipqa.core.fingerprint.StepRecord`): a step whose stats file
records the fingerprint the current settings give has finished, and a failure leaves nothing
that looks finished.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tipqa.build.step_inputs import (
    KeywordsInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
)
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.layout import ShardLayout
from tipqa.core.records import (
    Decision,
    Keywords,
    Question,
    TokenCandidates,
    VectorCandidates,
)
from tipqa.core.stats import Counted, StepStats
from tipqa.core.steps import Step
from tipqa.indexes.embedders.base import Embedder
from tipqa.indexes.token_index.base import FetchDocuments, TokenIndex
from tipqa.indexes.vector_index.base import EmbedsOnDemand, VectorIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.llm.keywords.base import KeywordExtractor
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.vector import judge_vector_candidates, search_vectors


def _usage(stats: StepStats, *components: object) -> None:
    """Fold the counters a backend keeps (calls, tokens, cache hits) into the step's stats."""
    for component in components:
        if isinstance(component, Counted):
            own = component.stats
            for name, value in own.counts.items():
                stats.add(f"{type(component).__name__}.{name}", value)
            stats.errors.update(own.errors)


@dataclass(frozen=True)
class Judging:
    """The backends of a judging step: the judge, and the documents' fetch (the token index's).

    The vector stage needs `fetch` only to record where each chunk is in its document.
    """

    judge: RelevanceJudge
    fetch: FetchDocuments | None = None


@dataclass(frozen=True)
class VectorSearching:
    """The backends of vector search: the embedder and the vector index, and the token index
    when the index embeds the token candidates on demand."""

    embedder: Embedder
    index: VectorIndex | EmbedsOnDemand
    token_index: TokenIndex | None = None


def extract_keywords(
    questions: list[Question], inputs: KeywordsInputs, extractor: KeywordExtractor, out: ShardLayout
) -> StepStats:
    """Keywords of every question of the shard."""
    info = {"extractor": extractor.name}
    stats = StepStats(Step.KEYWORDS, info=info, provenance=inputs.record.provenance())
    results = extractor.extract(questions)
    for result in results:
        stats.add("questions")
        stats.add("keywords", len(result.keywords))
        if result.error:
            stats.error("extraction_failed")
        elif not result.keywords:
            stats.add("no_keywords")
    write_records(out.keywords, results)
    _usage(stats, extractor)
    stats.write(out.stats(Step.KEYWORDS))
    return stats


def token_search(
    questions: list[Question], inputs: TokenSearchInputs, index: TokenIndex, out: ShardLayout
) -> StepStats:
    """Token search for the shard's questions whose keywords were extracted."""
    k1 = inputs.k1
    stats = StepStats(Step.TOKEN_SEARCH, info={"k1": k1}, provenance=inputs.record.provenance())
    keywords = {k.question_id: k for k in read_records(out.keywords, Keywords)}
    usable = [q for q in questions if not keywords[q.id].error]
    stats.add("skipped_keyword_error", len(questions) - len(usable))
    candidates = search_tokens(usable, keywords, index, k1, stats)
    write_records(out.token_candidates, candidates)
    stats.write(out.stats(Step.TOKEN_SEARCH))
    return stats


def token_judge(
    questions: list[Question], inputs: TokenJudgeInputs, backends: Judging, out: ShardLayout
) -> StepStats:
    """Judge the token candidates (early exit unless `judge_all`); decide the token outcomes."""
    judge, k1, windows, judge_all = (
        backends.judge,
        inputs.k1,
        inputs.window_limits(),
        inputs.judge_all,
    )
    if backends.fetch is None:
        raise ValueError("token judging reads the documents: give Judging a fetch")
    info = {"k1": k1, "judge": judge.name, **dataclasses.asdict(windows)}
    if judge_all:
        info["judge_all_candidates"] = True
    stats = StepStats(Step.TOKEN_JUDGE, info=info, provenance=inputs.record.provenance())
    keywords = {k.question_id: k for k in read_records(out.keywords, Keywords)}
    candidates = {c.question_id: c for c in read_records(out.token_candidates, TokenCandidates)}
    searched = [q for q in questions if q.id in candidates]
    decisions, judgments = judge_token_candidates(
        searched, candidates, backends.fetch, judge, k1, windows, stats, judge_all=judge_all
    )
    for question in questions:
        if question.id not in candidates:
            reason = f"keyword extraction failed: {keywords[question.id].error}"
            decisions.append(Decision(question.id, "undetermined", "token", reason))
            stats.add("outcome_undetermined")
    write_records(out.token_judgments, judgments)
    write_records(out.token_decisions, decisions)
    _usage(stats, judge)
    stats.write(out.stats(Step.TOKEN_JUDGE))
    return stats


def _to_vector(questions: list[Question], out: ShardLayout) -> list[Question]:
    """The shard's questions that the token stage passed on to vector search."""
    passed = {
        d.question_id for d in read_records(out.token_decisions, Decision) if d.label == "to_vector"
    }
    return [q for q in questions if q.id in passed]


def vector_search(
    questions: list[Question],
    inputs: VectorSearchInputs,
    backends: VectorSearching,
    out: ShardLayout,
) -> StepStats:
    """Vector search for the questions the token stage passed on."""
    embedder, k2 = backends.embedder, inputs.k2
    info = {"k2": k2, "embedder": embedder.name}
    stats = StepStats(Step.VECTOR_SEARCH, info=info, provenance=inputs.record.provenance())
    pending = _to_vector(questions, out)
    candidates = search_vectors(
        pending, embedder, backends.index, k2, stats, token_index=backends.token_index
    )
    write_records(out.vector_candidates, candidates)
    stats.write(out.stats(Step.VECTOR_SEARCH))
    return stats


def vector_judge(
    questions: list[Question], inputs: VectorJudgeInputs, backends: Judging, out: ShardLayout
) -> StepStats:
    """Judge every vector candidate and decide the remaining questions."""
    judge = backends.judge
    info = {"judge": judge.name}
    stats = StepStats(Step.VECTOR_JUDGE, info=info, provenance=inputs.record.provenance())
    pending = _to_vector(questions, out)
    keywords = {k.question_id: k for k in read_records(out.keywords, Keywords)}
    candidates = {c.question_id: c for c in read_records(out.vector_candidates, VectorCandidates)}
    decisions, judgments, instances = judge_vector_candidates(
        pending, candidates, keywords, judge, stats, backends.fetch
    )
    write_records(out.vector_judgments, judgments)
    write_records(out.vector_decisions, decisions)
    write_records(out.instances, instances)
    _usage(stats, judge)
    stats.write(out.stats(Step.VECTOR_JUDGE))
    return stats
