"""Authored pool partitions (the files `tipqa.dataset.partition.write_partition` leaves)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import write_json, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, SCHEMA_VERSION, Evidence, LabeledQuestion, VectorInstance
from tipqa.core.steps import SHARD_STEPS, Step

CONFIG = {
    "build": {"k1": "20", "k2": "3", "shard_size": "7"},
    "pool.dev": {"source": "demo"},
    "pool.train": {"source": "demo"},
    "keywords": {"backend": "openai", "model": "gpt-4o-mini"},
    "judge": {"max_words": "500"},
}


def provenance(sections: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """What a partition records of how it was made, for the settings of `sections`.

    Computed from the build plan of a real configuration (no step runs), in the shape
    `tipqa.dataset.provenance.pool_provenance` reads back from the steps' stats files.
    """
    plan = Plan(read_config(sections or CONFIG))
    steps: dict[str, Any] = {
        Step.QUESTIONS: plan.questions("dev").record.provenance(),
        Step.TOKEN_INDEX: plan.token_index.record.provenance(),
        Step.VECTOR_INDEX: plan.vector_index.record.provenance(),
        Step.WORLD: plan.world.record.provenance(),
    }
    steps.update({s: {"settings": plan.pool_step("dev", s).record.settings} for s in SHARD_STEPS})
    return {"tipqa_version": "0.1.0", "schema_version": SCHEMA_VERSION, "steps": steps}


INFO: dict[str, Any] = provenance()
MATCHES = [0, 1, 5, 50, 500, 5_000, 50_000]


def question(pool: str, index: int, label: str) -> LabeledQuestion:
    """One labelled question with an id unique to its pool, stage and evidence as the label says."""
    qid = f"{pool}-{label[:3]}-{index:03d}"
    stage = "vector" if label == "unanswerable" or index % 3 == 0 else "token"
    if label == "discarded":
        stage = "token"
    evidence = None
    if label == "answerable":
        unit = f"d{index}@w0" if stage == "token" else f"d{index}#0"
        evidence = Evidence(stage, f"d{index}", unit, f"Fact {index} of {pool}.")
    matches = None if label == "undetermined" else MATCHES[index % len(MATCHES)]
    if label == "discarded":
        matches = 1_000 + index
    return LabeledQuestion(
        id=qid,
        question=f"Question {index} of {pool}?",
        answer=f"Answer {index}",
        aliases=[f"Answer {index}", f"A{index}"],
        label=label,
        stage=stage,
        reason=f"{label} by construction",
        keywords=[f"kw{index}"],
        total_matches=matches,
        evidence=evidence,
    )


def instances_of(row: LabeledQuestion, k2: int = 3) -> list[VectorInstance]:
    """The vector-stage instances of a question that reached the vector stage."""
    if row.stage != "vector":
        return []
    return [
        VectorInstance(
            row.id,
            row.question,
            row.answer,
            f"d{rank}",
            f"d{rank}#0",
            f"Chunk {rank} for {row.id}.",
            1.0 - rank / 10,
            None if row.label == "undetermined" else (row.label == "answerable" and rank == 0),
        )
        for rank in range(k2)
    ]


def write_pool(
    run: RunLayout,
    pool: str,
    counts: dict[str, int],
    build: dict[str, Any] | None = None,
    ids: str | None = None,
) -> dict[str, list[LabeledQuestion]]:
    """Write pool `pool`'s partition with `counts` questions per label (ids made from `ids`,
    default the pool's name); return the rows by label."""
    folder = run.pool(pool).partition
    rows = {
        label: [question(ids or pool, i, label) for i in range(counts.get(label, 0))]
        for label in LABELS
    }
    for label, items in rows.items():
        write_records(folder / f"{label}.jsonl", items)
    instances = [i for items in rows.values() for row in items for i in instances_of(row)]
    write_records(folder / "instances.jsonl", instances)
    stats = {
        "step": "partition",
        "schema_version": SCHEMA_VERSION,
        "counts": {label: len(items) for label, items in rows.items()},
        "info": {"build": build or INFO},
    }
    write_json(folder / "stats.json", stats)
    return rows


DEV = {"answerable": 9, "unanswerable": 4, "discarded": 2, "undetermined": 1}
TRAIN = {"answerable": 14, "unanswerable": 8, "discarded": 3, "undetermined": 2}


def build_splits(
    root: Path,
    *,
    train: bool = True,
    per_label: int = 3,
    seed: int = 0,
    dev_counts: dict[str, int] | None = None,
    train_counts: dict[str, int] | None = None,
    build: dict[str, Any] | None = None,
    evaluation: Callable[[Path], object] | None = None,
) -> RunLayout:
    """Write a dev (and train) partition in run `root` and make the splits; return the run.

    `evaluation` is what the MakeSplits step passes (the lm-eval task writer).
    """
    from tipqa.dataset.splits import SplitPlan, make_splits

    run = RunLayout(root)
    write_pool(run, "dev", dev_counts or DEV, build)
    if train:
        write_pool(run, "train", train_counts or TRAIN, build)
    plan = SplitPlan("dev", "train" if train else None, per_label, seed)
    make_splits(run, plan, StepRecord(Step.SPLITS, {}), evaluation=evaluation)
    return run
