"""The labels of a build against another build's: which questions flipped, and how.

`flips_against(run, other)` returns the comparison the explorer shows, in the shape of the
label audit's comparison of two runs: `{"schema_version": 1, "a": {"run", "questions"},
"b": {...}, "matrix": {label_a: {label_b: n}}, "flips_by_stage": {"stage_a -> stage_b": n},
"flips": [{"id", "pool", "question", "a": side, "b": side}]}` with each side `{"label",
"stage", "reason", "evidence"}`. Both runs are read from their partitions; questions of one run
only are counted (`a.only`, `b.only`) and not compared.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.layout import RunLayout
from tipqa.core.records import LabeledQuestion
from tipqa.report.explorer.collect import partition_rows

SCHEMA_VERSION = 1


def run_pools(run: RunLayout) -> list[str]:
    """The pools of a run that have a partition."""
    pools = run.root / "pools"
    names = (
        sorted(p.name for p in pools.iterdir() if (p / "partition").is_dir())
        if pools.is_dir()
        else []
    )
    if not names:
        raise InputError("not a finished build: no pool has a partition", path=str(pools))
    return names


def _side(row: LabeledQuestion) -> dict[str, Any]:
    evidence = None if row.evidence is None else row.evidence.to_dict()
    return {"label": row.label, "stage": row.stage, "reason": row.reason, "evidence": evidence}


def flips_against(run: RunLayout, other: RunLayout) -> dict[str, Any]:
    """This run's labels against `other`'s, question by question (pools of the same name)."""
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    by_stage: Counter[str] = Counter()
    flips = []
    only_a = only_b = compared = 0
    theirs_pools = set(run_pools(other))
    for pool in run_pools(run):
        mine = partition_rows(run.pool(pool))
        theirs = partition_rows(other.pool(pool)) if pool in theirs_pools else {}
        only_a += len(mine.keys() - theirs.keys())
        only_b += len(theirs.keys() - mine.keys())
        for qid, a in mine.items():
            b = theirs.get(qid)
            if b is None:
                continue
            compared += 1
            matrix[a.label][b.label] += 1
            if a.label != b.label:
                by_stage[f"{a.stage} -> {b.stage}"] += 1
                flips.append(
                    {"id": qid, "pool": pool, "question": a.question, "a": _side(a), "b": _side(b)}
                )
    return {
        "schema_version": SCHEMA_VERSION,
        "a": {"run": str(run.root), "questions": compared, "only": only_a},
        "b": {"run": str(other.root), "questions": compared, "only": only_b},
        "matrix": {label: dict(row) for label, row in matrix.items()},
        "flips_by_stage": dict(by_stage),
        "flips": flips,
    }
