"""One function per step of a build: read the step's inputs, run the stage, write its outputs.

These are what the Luigi tasks call. Each writes its data files atomically and its stats file
last, so a step whose stats file exists has finished, and a failure leaves nothing that looks
finished.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tipqa.embedders.base import Embedder
from tipqa.jsonl import read_records, write_records
from tipqa.judges.base import RelevanceJudge
from tipqa.keywords.base import KeywordExtractor
from tipqa.layout import PoolLayout, ShardLayout
from tipqa.records import (
    Decision,
    Keywords,
    Question,
    TokenCandidates,
    VectorCandidates,
)
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.vector import judge_vector_candidates, search_vectors
from tipqa.stats import StageStats
from tipqa.token_index.base import TokenIndex
from tipqa.vector_index.base import VectorIndex
from tipqa.windows import WindowSettings


def shard_questions(questions_path: Path, shard: int, shard_size: int) -> list[Question]:
    """The questions of one shard: a block of `shard_size` in file order."""
    questions = read_records(questions_path, Question)
    return questions[shard * shard_size : (shard + 1) * shard_size]


def pool_shards(pool: PoolLayout, shard_size: int) -> list[tuple[list[Question], ShardLayout]]:
    """Every shard of a pool with its questions, the questions file read once."""
    questions = read_records(pool.questions, Question)
    return [
        (questions[start : start + shard_size], pool.shard(start // shard_size))
        for start in range(0, max(len(questions), 1), shard_size)
    ]


def shard_count(questions_path: Path, shard_size: int) -> int:
    """How many shards the questions file makes."""
    with open(questions_path, "rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    return max(1, -(-lines // shard_size))


def _usage(stats: StageStats, *components: object) -> None:
    """Fold the counters a backend keeps (calls, tokens, cache hits) into the step's stats."""
    for component in components:
        own = getattr(component, "stats", None)
        if isinstance(own, StageStats):
            for name, value in own.counts.items():
                stats.add(f"{type(component).__name__}.{name}", value)
            stats.errors.update(own.errors)


def extract_keywords(
    questions: list[Question], extractor: KeywordExtractor, out: ShardLayout
) -> StageStats:
    """Keywords of every question of the shard."""
    stats = StageStats("keywords", info={"extractor": extractor.name})
    results = extractor.extract(questions)
    for result in results:
        stats.add("questions")
        stats.add("keywords", len(result.keywords))
        if result.error:
            stats.error("extraction_failed")
        elif not result.keywords:
            stats.add("no_keywords")
    write_records(out.data("keywords"), results)
    _usage(stats, extractor)
    stats.write(out.stats("keywords"))
    return stats


def token_search(
    questions: list[Question], index: TokenIndex, k1: int, out: ShardLayout
) -> StageStats:
    """Token search for the shard's questions whose keywords were extracted."""
    stats = StageStats("token_search", info={"k1": k1})
    keywords = {k.question_id: k for k in read_records(out.data("keywords"), Keywords)}
    usable = [q for q in questions if not keywords[q.id].error]
    stats.add("skipped_keyword_error", len(questions) - len(usable))
    candidates = search_tokens(usable, keywords, index, k1, stats)
    write_records(out.data("token_candidates"), candidates)
    stats.write(out.stats("token_search"))
    return stats


def token_judge(
    questions: list[Question],
    fetch: Callable[[list[str]], dict],
    judge: RelevanceJudge,
    k1: int,
    windows: WindowSettings,
    out: ShardLayout,
) -> StageStats:
    """Judge the token candidates (early exit) and decide each question's token outcome."""
    stats = StageStats("token_judge", info={"k1": k1, "judge": judge.name, **windows.__dict__})
    keywords = {k.question_id: k for k in read_records(out.data("keywords"), Keywords)}
    candidates = {
        c.question_id: c for c in read_records(out.data("token_candidates"), TokenCandidates)
    }
    searched = [q for q in questions if q.id in candidates]
    decisions, judgments = judge_token_candidates(
        searched, candidates, fetch, judge, k1, windows, stats
    )
    for question in questions:
        if question.id not in candidates:
            reason = f"keyword extraction failed: {keywords[question.id].error}"
            decisions.append(Decision(question.id, "undetermined", "token", reason))
            stats.add("outcome_undetermined")
    write_records(out.data("token_judgments"), judgments)
    write_records(out.data("token_decisions"), decisions)
    _usage(stats, judge)
    stats.write(out.stats("token_judge"))
    return stats


def _to_vector(questions: list[Question], out: ShardLayout) -> list[Question]:
    """The shard's questions that the token stage passed on to vector search."""
    passed = {
        d.question_id
        for d in read_records(out.data("token_decisions"), Decision)
        if d.label == "to_vector"
    }
    return [q for q in questions if q.id in passed]


def vector_search(
    questions: list[Question], embedder: Embedder, index: VectorIndex, k2: int, out: ShardLayout
) -> StageStats:
    """Vector search for the questions the token stage passed on."""
    stats = StageStats("vector_search", info={"k2": k2, "embedder": embedder.name})
    candidates = search_vectors(_to_vector(questions, out), embedder, index, k2, stats)
    write_records(out.data("vector_candidates"), candidates)
    stats.write(out.stats("vector_search"))
    return stats


def vector_judge(questions: list[Question], judge: RelevanceJudge, out: ShardLayout) -> StageStats:
    """Judge every vector candidate and decide the remaining questions."""
    stats = StageStats("vector_judge", info={"judge": judge.name})
    pending = _to_vector(questions, out)
    keywords = {k.question_id: k for k in read_records(out.data("keywords"), Keywords)}
    candidates = {
        c.question_id: c for c in read_records(out.data("vector_candidates"), VectorCandidates)
    }
    decisions, judgments, instances = judge_vector_candidates(
        pending, candidates, keywords, judge, stats
    )
    write_records(out.data("vector_judgments"), judgments)
    write_records(out.data("vector_decisions"), decisions)
    write_records(out.data("instances"), instances)
    _usage(stats, judge)
    stats.write(out.stats("vector_judge"))
    return stats
