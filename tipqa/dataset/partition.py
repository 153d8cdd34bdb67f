"""The final partition: every question's label with its evidence, from all shards."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import PartitionLayout, ShardLayout
from tipqa.core.records import (
    LABELS,
    Decision,
    Keywords,
    LabeledQuestion,
    Question,
    VectorInstance,
)
from tipqa.core.stats import StepStats
from tipqa.core.steps import SHARD_STEPS, Step
from tipqa.dataset.qrels import shard_units, write_relevance
from tipqa.dataset.retry import shard_failures

EVIDENCE_FIELDS = ("stage", "doc_id", "unit_id", "text")


def label_questions(questions: list[Question], shard: ShardLayout) -> list[LabeledQuestion]:
    """Join a shard's questions with their final decision (vector stage after token stage)."""
    decisions: dict[str, Decision] = {
        d.question_id: d for d in read_records(shard.token_decisions, Decision)
    }
    for decision in read_records(shard.vector_decisions, Decision):
        decisions[decision.question_id] = decision
    keywords = {k.question_id: k.keywords for k in read_records(shard.keywords, Keywords)}
    token_totals = {
        d.question_id: d.total_matches for d in read_records(shard.token_decisions, Decision)
    }
    rows = []
    for q in questions:
        found = decisions.get(q.id)
        if found is None:
            raise InputError(
                f"question {q.id} has no decision: the shard's steps did not run on its "
                "questions; rerun luigi --module pipelines CreateDataset",
                path=str(shard.token_decisions),
            )
        decision = found
        if decision.label == "to_vector":
            raise RuntimeError(f"{shard.root}: question {q.id} has no vector-stage decision")
        rows.append(
            LabeledQuestion(
                id=q.id,
                question=q.text,
                answer=q.answer,
                aliases=q.aliases,
                label=decision.label,
                stage=decision.stage,
                reason=decision.reason,
                keywords=keywords.get(q.id, []),
                total_matches=token_totals.get(q.id),
                evidence=decision.evidence,
            )
        )
    return rows


def write_partition(
    shards: list[tuple[list[Question], ShardLayout]],
    out: PartitionLayout,
    record: StepRecord,
    build: dict[str, Any],
) -> StepStats:
    """Write one JSONL file per label, the vector instances, the relevance files
    (`tipqa.dataset.qrels`), stats, and a DatasetDict.

    `build` is how the shards were made (`tipqa.dataset.provenance.pool_provenance`), kept in the
    stats for the splits and the dataset card.
    """
    stats = StepStats(Step.PARTITION, info={"build": build}, provenance=record.provenance())
    rows: list[LabeledQuestion] = []
    instances: list[VectorInstance] = []
    failures: Counter[str] = Counter()
    relevance: Counter[str] = Counter()
    engine_starts = 0
    judging: Counter[str] = Counter()
    for questions, shard in shards:
        rows.extend(label_questions(questions, shard))
        instances.extend(read_records(shard.instances, VectorInstance))
        failures += shard_failures(shard)
        engine_starts += shard_engine_starts(shard)
        judging.update(shard_judging(shard))
    by_label: dict[str, list[LabeledQuestion]] = {
        label: [r for r in rows if r.label == label] for label in LABELS
    }
    for label, items in by_label.items():
        write_records(out.labelled(label), items)
        stats.add(label, len(items))
    write_records(out.instances, instances)
    stats.add("questions", len(rows))
    stats.add("instances", len(instances))
    groups = (shard_units(shard, relevance) for _, shard in shards)
    relevance.update(write_relevance(groups, out.root))
    stats.info["relevance"] = dict(sorted(relevance.items()))
    stage_counts = Counter(f"{r.label}_{r.stage}" for r in rows)
    stats.info["by_stage"] = dict(sorted(stage_counts.items()))
    stats.info["llm_failures"] = dict(sorted(failures.items()))
    stats.info["llm_engine_starts"] = engine_starts
    if judging["confirmed"]:
        stats.info["judging"] = {name: judging[name] for name in JUDGING_COUNTS}
    save_dataset_dict(by_label, instances, out.dataset)
    stats.write(out.stats)
    return stats


JUDGING_COUNTS = ("prompts", "confirmation_prompts", "confirmation_yes", "confirmation_no")
"""The judging steps' counters a partition sums: the build judge's prompts, and the confirming
judge's prompts and answers (`[judge.confirm]`)."""


def shard_judging(shard: ShardLayout) -> Counter[str]:
    """The judge prompts the shard's judging steps recorded (`JUDGING_COUNTS`), and whether a
    confirming judge judged (`confirmed`)."""
    counts: Counter[str] = Counter()
    for step in (Step.TOKEN_JUDGE, Step.VECTOR_JUDGE):
        path = shard.stats(step)
        stats = read_json(path) if path.is_file() else {}
        if not isinstance(stats, dict):
            continue
        recorded = stats.get("counts", {})
        counts.update({name: int(recorded.get(name, 0)) for name in JUDGING_COUNTS})
        counts["confirmed"] |= "confirm_judge" in stats.get("info", {})
    return counts


def shard_engine_starts(shard: ShardLayout) -> int:
    """vLLM offline engines the shard's steps started (`<Backend>.engine_starts` in their stats)."""
    starts = 0
    for step in SHARD_STEPS:
        path = shard.stats(step)
        stats = read_json(path) if path.is_file() else {}
        counts = stats.get("counts", {}) if isinstance(stats, dict) else {}
        starts += sum(int(v) for k, v in counts.items() if k.endswith(".engine_starts"))
    return starts


def flatten_evidence(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with its `evidence` object as `evidence_*` columns (None when absent), for Arrow."""
    evidence = row.pop("evidence") or {}
    for key in EVIDENCE_FIELDS:
        row[f"evidence_{key}"] = evidence.get(key)
    return row


def question_row(item: LabeledQuestion) -> dict[str, Any]:
    """A labelled question as a flat row: evidence fields become columns."""
    return flatten_evidence(item.to_dict())


def _dataset(rows: list[dict[str, Any]], features: Any) -> Any:
    """A `datasets.Dataset` of `rows` by columns (so that an empty one keeps its columns)."""
    from datasets import Dataset

    return Dataset.from_dict({name: [r[name] for r in rows] for name in features}, features)


def save_dataset_dict(
    by_label: dict[str, list[LabeledQuestion]], instances: list[VectorInstance], out: Path
) -> None:
    """Save the partition as a `datasets.DatasetDict` (one split per label, plus instances)."""
    from datasets import DatasetDict, Features, Sequence, Value

    string = Value("string")
    question_features = Features(
        {
            "id": string,
            "question": string,
            "answer": string,
            "aliases": Sequence(string),
            "label": string,
            "stage": string,
            "reason": string,
            "keywords": Sequence(string),
            "total_matches": Value("int64"),
            **{f"evidence_{k}": string for k in EVIDENCE_FIELDS},
        }
    )
    instance_features = Features(
        {
            "question_id": string,
            "question": string,
            "answer": string,
            "doc_id": string,
            "chunk_id": string,
            "text": string,
            "score": Value("float64"),
            "relevant": Value("bool"),
        }
    )
    splits = {
        label: _dataset([question_row(r) for r in rows], question_features)
        for label, rows in by_label.items()
    }
    splits["instances"] = _dataset([i.to_dict() for i in instances], instance_features)
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    empty = {name: 1 for name, split in splits.items() if split.num_rows == 0}
    DatasetDict(splits).save_to_disk(str(staging), num_shards=empty)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
