"""The audit of one pool: its stats keep what its judge counted, errors included."""

from __future__ import annotations

from pathlib import Path

from support.audit_support import PerfectJudge, planted_documents, planted_questions

from tipqa.audit.pool import (
    AuditBackends,
    AuditRun,
    audit_pool,
    partition_digest,
    read_the_current_partition,
)
from tipqa.audit.settings import AuditSettings
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import write_json, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LabeledQuestion
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.stages.windows import WindowSettings


class CountedJudge(PerfectJudge):
    """The perfect judge, counting its work as an LLM judge does (a bad cache entry too)."""

    def __init__(self) -> None:
        super().__init__()
        self.stats = StepStats("judge")

    def judge(self, requests):
        self.stats.add("calls", len(requests))
        self.stats.error("cache_bad_entry")
        return super().judge(requests)


def test_the_audit_stats_keep_the_judges_counts_and_errors(tmp_path: Path) -> None:
    index = TantivyTokenIndex.at(tmp_path / "index", threads=1)
    index.build(planted_documents().values())
    run = RunLayout.of(tmp_path, "run")
    pool = run.pool("dev")
    question = planted_questions()["after_k1"]
    row = LabeledQuestion(
        question.id,
        question.text,
        question.answer,
        question.aliases,
        "discarded",
        "token",
        "all judged documents irrelevant",
        extract_keywords(question.text),
        9,
        None,
    )
    write_records(pool.partition_files.labelled("discarded"), [row])
    write_records(pool.partition_files.labelled("unanswerable"), [])
    shard = pool.shard(0)
    write_records(shard.token_judgments, [])
    write_records(shard.vector_judgments, [])
    for step in (Step.TOKEN_JUDGE, Step.VECTOR_JUDGE):
        write_json(shard.stats(step), {"counts": {"prompts": 3}})
    judge = CountedJudge()
    settings = AuditSettings(sample=1.0, budget=10)
    audit_run = AuditRun(settings, 3, 2, WindowSettings(), StepRecord(Step.AUDIT, {}))
    backends = AuditBackends(judge, index, index, lambda questions, k: [])
    result, recorded = audit_pool(audit_run, backends, pool, [shard])
    assert [found["id"] for found in result["found"]] == ["after_k1"]
    stats = recorded.to_dict()
    assert stats["counts"]["CountedJudge.calls"] == len(judge.asked) > 0
    assert stats["errors"]["cache_bad_entry"] == judge.stats.errors["cache_bad_entry"] > 0


def test_an_audit_is_current_only_over_the_finished_partition_it_read(tmp_path: Path) -> None:
    pool = RunLayout.of(tmp_path, "run").pool("dev")
    question = planted_questions()["after_k1"]
    row = LabeledQuestion(
        question.id, question.text, question.answer, question.aliases, "discarded", "token",
        "why", ["Brannoc Hale"], 9, None,
    )  # fmt: skip
    write_records(pool.partition_files.labelled("discarded"), [row])
    partitioned = StepRecord(Step.PARTITION, {}).provenance()
    StepStats(Step.PARTITION, provenance=partitioned).write(pool.partition_stats)
    StepStats(Step.AUDIT, info={"partition": partition_digest(pool)}).write(pool.audit_stats)
    assert read_the_current_partition(pool)
    write_records(pool.partition_files.labelled("undetermined"), [row])
    assert not read_the_current_partition(pool), "a partition made again"
    StepStats(Step.AUDIT, info={"partition": partition_digest(pool)}).write(pool.audit_stats)
    assert read_the_current_partition(pool)
    pool.partition_stats.unlink()
    assert not read_the_current_partition(pool), "a partition to be made again"
