"""The shard steps of Algorithm 1: keywords, token search and judging, vector search and judging.

Each step is a function of the shard's questions, its inputs record and its backends that runs
the stage and writes its outputs (`extract_keywords`, ...), and one of the record and the run's
layout that reads the questions and makes the backends first: what the Luigi tasks call
(`extract_shard_keywords`, ...). Each writes its data files atomically and its stats file last,
with the step's provenance (`tipqa.core.fingerprint.StepRecord`): a step whose stats file
records the fingerprint the current settings give has finished, and a failure leaves nothing
that looks finished.
"""

from __future__ import annotations

import dataclasses
from contextlib import closing

from tipqa.builder.assemble import (
    TokenJudging,
    VectorJudging,
    VectorSearching,
    llm_cache,
    token_index,
    token_judging,
    vector_judging,
    vector_searching,
)
from tipqa.builder.components import make_keyword_extractor
from tipqa.builder.inputs import shard_questions
from tipqa.builder.step_inputs import (
    KeywordsInputs,
    ShardInputs,
    TokenJudgeInputs,
    TokenSearchInputs,
    VectorJudgeInputs,
    VectorSearchInputs,
)
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.layout import RunLayout, ShardLayout
from tipqa.core.records import (
    Decision,
    Keywords,
    Question,
    TokenCandidates,
    VectorCandidates,
)
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.token_index.base import TokenIndex
from tipqa.llm.keywords.base import KeywordExtractor
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.vector import judge_vector_candidates, search_vectors


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
    stats.merge_counted(extractor)
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
    questions: list[Question], inputs: TokenJudgeInputs, backends: TokenJudging, out: ShardLayout
) -> StepStats:
    """Judge the token candidates (early exit unless `judge_all`); decide the token outcomes."""
    judges, k1, windows, judge_all = (
        backends.judges,
        inputs.k1,
        inputs.window_limits(),
        inputs.judge_all,
    )
    info = {"k1": k1, **judges.info(), **dataclasses.asdict(windows)}
    if judge_all:
        info["judge_all_candidates"] = True
    stats = StepStats(Step.TOKEN_JUDGE, info=info, provenance=inputs.record.provenance())
    keywords = {k.question_id: k for k in read_records(out.keywords, Keywords)}
    candidates = {c.question_id: c for c in read_records(out.token_candidates, TokenCandidates)}
    searched = [q for q in questions if q.id in candidates]
    decisions, judgments = judge_token_candidates(
        searched, candidates, backends.fetch, judges, k1, windows, stats, judge_all=judge_all
    )
    for question in questions:
        if question.id not in candidates:
            reason = f"keyword extraction failed: {keywords[question.id].error}"
            decisions.append(Decision(question.id, "undetermined", "token", reason))
            stats.add("outcome_undetermined")
    write_records(out.token_judgments, judgments)
    write_records(out.token_decisions, decisions)
    judges.count(stats)
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
    questions: list[Question], inputs: VectorJudgeInputs, backends: VectorJudging, out: ShardLayout
) -> StepStats:
    """Judge every vector candidate and decide the remaining questions."""
    judges = backends.judges
    info = judges.info()
    stats = StepStats(Step.VECTOR_JUDGE, info=info, provenance=inputs.record.provenance())
    pending = _to_vector(questions, out)
    keywords = {k.question_id: k for k in read_records(out.keywords, Keywords)}
    candidates = {c.question_id: c for c in read_records(out.vector_candidates, VectorCandidates)}
    decisions, judgments, instances = judge_vector_candidates(
        pending, candidates, keywords, judges, stats, backends.fetch
    )
    write_records(out.vector_judgments, judgments)
    write_records(out.vector_decisions, decisions)
    write_records(out.instances, instances)
    judges.count(stats)
    stats.write(out.stats(Step.VECTOR_JUDGE))
    return stats


def shard_of(inputs: ShardInputs, layout: RunLayout) -> ShardLayout:
    """The files of the shard an inputs record is of (ValueError for a pool's record)."""
    if inputs.shard is None:
        raise ValueError(f"{inputs.step} of pool {inputs.pool!r}: a pool's record, not a shard's")
    return layout.pool(inputs.pool).shard(inputs.shard)


def extract_shard_keywords(inputs: KeywordsInputs, layout: RunLayout) -> StepStats:
    """ExtractKeywords: the keywords of the shard's questions, by the configured extractor."""
    out = shard_of(inputs, layout)
    with closing(make_keyword_extractor(inputs.keywords, llm_cache(inputs, layout))) as extractor:
        return extract_keywords(shard_questions(out), inputs, extractor, out)


def search_shard_tokens(inputs: TokenSearchInputs, layout: RunLayout) -> StepStats:
    """TokenSearch of the shard's questions, in the build's token index."""
    out = shard_of(inputs, layout)
    return token_search(shard_questions(out), inputs, token_index(inputs.index, layout), out)


def judge_shard_tokens(inputs: TokenJudgeInputs, layout: RunLayout) -> StepStats:
    """TokenJudge of the shard's token candidates."""
    out = shard_of(inputs, layout)
    with closing(token_judging(inputs, layout)) as judging:
        return token_judge(shard_questions(out), inputs, judging, out)


def search_shard_vectors(inputs: VectorSearchInputs, layout: RunLayout) -> StepStats:
    """VectorSearch of the shard's questions the token stage passed on."""
    out = shard_of(inputs, layout)
    return vector_search(shard_questions(out), inputs, vector_searching(inputs, layout), out)


def judge_shard_vectors(inputs: VectorJudgeInputs, layout: RunLayout) -> StepStats:
    """VectorJudge of the shard's vector candidates."""
    out = shard_of(inputs, layout)
    with closing(vector_judging(inputs, layout)) as judging:
        return vector_judge(shard_questions(out), inputs, judging, out)
