"""The audit of one pool: sample its unanswerable and discarded questions, search where the
build did not, judge what it never judged, and write `audit.json` (see docs/trust.md).

Reads the pool's partition (labels and keywords), its shards' judgments (what the build
judged) and stats (what judging cost), the token index, and the vector stage only when an
unanswerable question is audited. Writes `audit_judgments.jsonl` (every judgment, stage
`audit`) and `audit.json`; the caller writes the stats file once it takes the audit as
finished. Labels are never changed here: with `[audit] apply` the splits read the findings
(`tipqa.dataset.splits`).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tipqa.audit.figures import label_figures
from tipqa.audit.judge_audit import JUDGE_AUDITED, SecondJudge, rejudge
from tipqa.audit.judging import AuditedQuestion, judge_rounds
from tipqa.audit.relaxations import (
    BuildView,
    Candidate,
    NearestChunks,
    alias_only,
    interleave,
    keywords_minus_one,
    token_after_k1,
    vector_deeper,
)
from tipqa.audit.settings import AuditSettings
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import iter_records, read_json, write_json, write_records
from tipqa.core.layout import PoolLayout, ShardLayout
from tipqa.core.records import LABELS, Judgment, LabeledQuestion, Question
from tipqa.core.stats import Counted, StepStats, recorded_fingerprint
from tipqa.core.steps import Step
from tipqa.dataset.splits import AUDIT_SCHEMA_VERSION, AUDITED
from tipqa.indexes.token_index.base import RanksText, TokenIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.windows import WindowSettings

PROMPT_TOKENS = ("prompt_tokens", "saved_prompt_tokens")
"""The counters of a judge's prompt tokens: those sent, and those its cache answered."""


@dataclass(frozen=True)
class AuditRun:
    """What an audit of a pool is asked to do: its settings, the build's k1 and k2 and judge
    windows, and its step record (fingerprint and provenance)."""

    settings: AuditSettings
    k1: int
    k2: int
    windows: WindowSettings
    record: StepRecord


@dataclass(frozen=True)
class AuditBackends:
    """The build's own backends: its judge (with its cache), its token index (and that index
    as a BM25 ranker, when it ranks texts), and its vector search (the embedder is loaded on
    the first call); the judge audit's judge (`[audit.judge]`, with the same cache), if any."""

    judge: RelevanceJudge
    index: TokenIndex
    ranker: RanksText | None
    nearest: NearestChunks
    second: RelevanceJudge | None = None

    def close(self) -> None:
        """Let go of the judges' connections."""
        self.judge.close()
        if self.second is not None:
            self.second.close()


def sample_ids(ids: Iterable[str], share: float, seed: int, label: str) -> list[str]:
    """A seeded simple random sample of `share` of `ids` (rounded up), sorted.

    Each label draws with its own generator, so one label's size never moves the other's draw.
    """
    population = sorted(ids)
    size = min(len(population), math.ceil(round(share * len(population), 9)))
    return sorted(random.Random(f"{seed}:{label}").sample(population, size))


def prompt_tokens(counts: Mapping[str, float]) -> int:
    """The prompt tokens a judge's counters record (sent and answered from the cache)."""
    return int(sum(v for k, v in counts.items() if k.rsplit(".", 1)[-1] in PROMPT_TOKENS))


def build_cost(shards: list[ShardLayout]) -> dict[str, int]:
    """The judge prompts and prompt tokens of the build's two judging steps, from their stats."""
    calls = tokens = 0
    for shard in shards:
        for step in (Step.TOKEN_JUDGE, Step.VECTOR_JUDGE):
            counts = read_json(shard.stats(step))["counts"]  # type: ignore[index]
            calls += int(counts.get("prompts", 0))
            tokens += prompt_tokens(counts)
    return {"judge_calls": calls, "prompt_tokens": tokens}


def build_views(rows: list[LabeledQuestion], shards: list[ShardLayout]) -> list[BuildView]:
    """The sampled questions (their partition rows) with the units the build judged."""
    docs: dict[str, set[str]] = {row.id: set() for row in rows}
    chunks: dict[str, set[str]] = {row.id: set() for row in rows}
    for shard in shards:
        for path, judged in ((shard.token_judgments, docs), (shard.vector_judgments, chunks)):
            for judgment in iter_records(path, Judgment):
                if judgment.question_id in judged:
                    unit = judgment.doc_id if judged is docs else judgment.unit_id
                    judged[judgment.question_id].add(unit)
    return [
        BuildView(
            Question(row.id, row.question, row.answer, row.aliases),
            row.label,
            row.keywords,
            frozenset(docs[row.id]),
            frozenset(chunks[row.id]),
        )
        for row in rows
    ]


def candidates(
    views: list[BuildView], run: AuditRun, backends: AuditBackends
) -> dict[str, list[Candidate]]:
    """Every audited question's candidates, its relaxations in turns (`interleave`)."""
    depth, index = run.settings.budget, backends.index
    unanswerable = [view for view in views if view.label == "unanswerable"]
    deeper = vector_deeper(unanswerable, backends.nearest, run.k2, depth)
    out = {}
    for view in views:
        found = alias_only(view, index, backends.ranker, depth)
        if view.label == "unanswerable":
            streams = [keywords_minus_one(view, index, depth), found, deeper[view.question.id]]
        else:
            streams = [token_after_k1(view, index, run.k1, depth), found]
        out[view.question.id] = interleave(streams)
    return out


def labels_found(audits: list[AuditedQuestion], stats: StepStats) -> dict[str, dict[str, Any]]:
    """Per label: its figures (`tipqa.audit.figures`), the audited questions with a failed
    judgment and no evidence (`failed`) left out of its share."""
    out = {}
    for label in AUDITED:
        mine = [audit for audit in audits if audit.view.label == label]
        found = [audit.finding for audit in mine if audit.finding is not None]
        failed = sum(audit.failed > 0 and audit.finding is None for audit in mine)
        labelled = int(stats.counts[f"{label}.labelled"])
        out[label] = label_figures(labelled, len(mine), found, failed)
        stats.add(f"{label}.found", len(found))
        stats.add(f"{label}.undetermined", failed)
    return out


def partition_digest(pool: PoolLayout) -> str:
    """A digest of the pool's partition as it is now (its label files, which the audit reads)."""
    digest = hashlib.sha256()
    for label in LABELS:
        path = pool.partition_files.labelled(label)
        digest.update(f"{label}\0".encode())
        digest.update(path.read_bytes() if path.is_file() else b"")
    return digest.hexdigest()


def read_the_current_partition(pool: PoolLayout) -> bool:
    """True when the pool's finished audit read its partition as it is now, and that partition
    is finished (a partition to be made again, by a retry for one, needs a new audit although
    its fingerprint is the same)."""
    if recorded_fingerprint(pool.partition_stats) is None:
        return False
    recorded = read_json(pool.audit_stats) if pool.audit_stats.is_file() else {}
    info = recorded.get("info", {}) if isinstance(recorded, dict) else {}
    return isinstance(info, dict) and info.get("partition") == partition_digest(pool)


def undetermined(result: Mapping[str, Any]) -> int:
    """How many audited questions of an `audit.json` are undetermined (a judgment failed)."""
    return sum(int(result["by_label"][label].get("failed", 0)) for label in AUDITED)


def audit_pool(
    run: AuditRun, backends: AuditBackends, pool: PoolLayout, shards: list[ShardLayout]
) -> tuple[dict[str, Any], StepStats]:
    """Audit the pool (see the module docstring): write its judgments and `audit.json`, and
    return what `audit.json` holds with the step's stats, for the caller to write once it
    takes the audit as finished (`undetermined` counts what keeps it from being so)."""
    settings = run.settings
    info = {
        "judge": backends.judge.name,
        "k1": run.k1,
        "k2": run.k2,
        "partition": partition_digest(pool),
    }
    stats = StepStats(Step.AUDIT, info=info, provenance=run.record.provenance())
    sampled: dict[str, list[str]] = {}
    rows: list[LabeledQuestion] = []
    for label in AUDITED:
        path = pool.partition_files.labelled(label)
        labelled = {row.id: row for row in iter_records(path, LabeledQuestion)}
        sampled[label] = sample_ids(labelled, settings.sample, settings.seed, label)
        rows += [labelled[qid] for qid in sampled[label]]
        stats.add(f"{label}.labelled", len(labelled))
        stats.add(f"{label}.audited", len(sampled[label]))
    views = build_views(rows, shards)
    found = candidates(views, run, backends)
    audits = [AuditedQuestion(view, found[view.question.id], settings.budget) for view in views]
    judgments = judge_rounds(audits, backends.index.get, backends.judge, run.windows, stats)
    findings = [audit.finding for audit in audits if audit.finding is not None]
    by_label = labels_found(audits, stats)
    judge_counts = backends.judge.stats.counts if isinstance(backends.judge, Counted) else {}
    stats.merge_counted(backends.judge)
    result = {
        "schema_version": AUDIT_SCHEMA_VERSION,
        "pool": pool.root.name,
        "fingerprint": run.record.fingerprint,
        "partition": info["partition"],
        "settings": run.record.settings,
        "audited": len(views),
        "audited_ids": sampled,
        "by_label": by_label,
        "rate": by_label["unanswerable"]["rate"],
        "ci95": by_label["unanswerable"]["ci95"],
        "found": [finding.to_dict() for finding in findings],
        "judge_calls": int(stats.counts["prompts"]),
        "prompt_tokens": prompt_tokens(judge_counts),
        "build": build_cost(shards),
    }
    if backends.second is not None and settings.judge_sample > 0:
        result["judge_audit"], second = audit_the_judge(run, backends, pool, shards, stats)
        write_records(pool.judge_audit_judgments, second)
    write_records(pool.audit_judgments, judgments)
    write_json(pool.audit, result)
    return result, stats


def audit_the_judge(
    run: AuditRun,
    backends: AuditBackends,
    pool: PoolLayout,
    shards: list[ShardLayout],
    stats: StepStats,
) -> tuple[dict[str, Any], list[Judgment]]:
    """The judge audit of the pool (`tipqa.audit.judge_audit`): `judge_sample` of each label,
    seeded apart from the search audit's sample; what `audit.json` holds under `judge_audit`,
    and the second judge's judgments."""
    settings, judge = run.settings, backends.second
    assert judge is not None
    sampled: dict[str, list[LabeledQuestion]] = {}
    labelled: dict[str, int] = {}
    for label in JUDGE_AUDITED:
        path = pool.partition_files.labelled(label)
        rows = {row.id: row for row in iter_records(path, LabeledQuestion)}
        ids = sample_ids(rows, settings.judge_sample, settings.seed, f"judge:{label}")
        sampled[label], labelled[label] = [rows[qid] for qid in ids], len(rows)
    identity = run.record.settings.get("audit_judge", {})
    second = SecondJudge(judge, identity, settings.budget, settings.seed, run.windows)
    result, judgments = rejudge(sampled, labelled, second, shards, backends.index.get, stats)
    result["prompt_tokens"] = prompt_tokens(
        judge.stats.counts if isinstance(judge, Counted) else {}
    )
    return result, judgments
