"""Authored gold splits and prediction files for the scorer's tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tipqa.jsonl import write_records
from tipqa.records import Evidence, LabeledQuestion
from tipqa.splits import SplitsLayout
from tipqa.stats import StageStats


def labeled(
    qid: str,
    label: str,
    answer: str,
    aliases: Iterable[str] = (),
    *,
    stage: str | None = None,
    total_matches: int | None = 3,
    question: str = "",
) -> LabeledQuestion:
    """A split row written for a test (answerable ones get a token-stage evidence)."""
    stage = stage or ("token" if label == "answerable" else "vector")
    evidence = Evidence(stage, f"doc-{qid}", f"doc-{qid}:0", "text") if label == "answerable" else None
    return LabeledQuestion(
        id=qid,
        question=question or f"Which answer does question {qid} have?",
        answer=answer,
        aliases=list(aliases),
        label=label,  # type: ignore[arg-type]
        stage=stage,  # type: ignore[arg-type]
        reason="authored for a test",
        keywords=[],
        total_matches=total_matches,
        evidence=evidence,
    )


def write_split(root: Path, rows: list[LabeledQuestion], split: str = "test") -> Path:
    """A splits folder under `root` holding `rows` as `split`; returns the split's folder."""
    layout = SplitsLayout(root / "splits")
    write_records(layout.questions(split), rows)
    StageStats("splits", info={"splits": {split: {"questions": len(rows)}}}).write(layout.stats)
    return layout.questions(split).parent


def write_lines(path: Path, rows: Iterable[Any]) -> Path:
    """A JSONL file of the given objects (strings are written as they are)."""
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path
