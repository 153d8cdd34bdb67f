"""Authored pool partitions (the files `tipqa.partition.write_partition` leaves) for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tipqa.jsonl import write_json, write_records
from tipqa.records import LABELS, Evidence, LabeledQuestion, VectorInstance

INFO: dict[str, Any] = {
    "tipqa_version": "0.1.0",
    "schema_version": 1,
    "build": {"name": "t", "k1": 20, "k2": 3, "shard_size": 7, "output_root": "/x/outputs"},
    "corpus": {"source": "files", "paths": ["/home/someone/pile/part-*.jsonl.zst"], "name": ""},
    "token_index": {"backend": "tantivy"},
    "vector_index": {"backend": "faiss", "kind": "hnsw"},
    "embedder": {"backend": "sentence-transformers", "model": "all-MiniLM-L6-v2"},
    "keywords": {"backend": "openai", "model": "gpt-4o-mini", "prompt": "keywords-v1"},
    "judge": {"backend": "rules", "prompt": "judge-v1", "max_words": 500, "max_windows": 16},
}
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
    folder: Path, pool: str, counts: dict[str, int], info: dict[str, Any] | None = None
) -> dict[str, list[LabeledQuestion]]:
    """Write a partition folder with `counts` questions per label; return the rows by label."""
    rows = {
        label: [question(pool, i, label) for i in range(counts.get(label, 0))] for label in LABELS
    }
    for label, items in rows.items():
        write_records(folder / f"{label}.jsonl", items)
    instances = [i for items in rows.values() for row in items for i in instances_of(row)]
    write_records(folder / "instances.jsonl", instances)
    stats = {
        "stage": "partition",
        "counts": {label: len(items) for label, items in rows.items()},
        "info": {"pool": pool, **(info or INFO)},
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
) -> Path:
    """Write a dev (and train) partition under `root` and make the splits; return their folder."""
    from tipqa.splits import SplitProtocol, make_splits

    write_pool(root / "dev", "dev", dev_counts or DEV)
    if train:
        write_pool(root / "train", "train", train_counts or TRAIN)
    protocol = SplitProtocol("dev", "train" if train else None, per_label, seed)
    make_splits(root / "dev", root / "train" if train else None, protocol, root / "splits")
    return root / "splits"
