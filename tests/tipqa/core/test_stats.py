"""Stage counters and their stats file."""

from __future__ import annotations

from pathlib import Path

from tipqa.core.jsonl import read_json
from tipqa.core.records import SCHEMA_VERSION
from tipqa.core.stats import StepStats


def test_counts_errors_and_file(tmp_path: Path) -> None:
    stats = StepStats("token_judge", info={"k1": 5})
    stats.add("prompts")
    stats.add("prompts", 2)
    stats.add("seconds_judging", 0.5)
    stats.error("missing_document")
    stats.error("missing_document", 2)
    path = tmp_path / "s" / "token_judge.stats.json"
    stats.write(path)
    data = read_json(path)
    assert data["step"] == "token_judge"
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["counts"] == {"prompts": 3, "seconds_judging": 0.5}
    assert data["errors"] == {"missing_document": 3}
    assert data["info"] == {"k1": 5}
    assert data["seconds"] >= 0


def test_merge_prefixes_counts_and_adds_errors() -> None:
    total = StepStats("all")
    total.add("a.questions", 1)
    total.error("bad", 1)
    part = StepStats("part")
    part.add("questions", 4)
    part.error("bad", 2)
    part.error("worse")
    total.merge(part, prefix="a.")
    assert total.counts == {"a.questions": 5}
    assert total.errors == {"bad": 3, "worse": 1}


def test_counts_are_sorted_in_the_dict() -> None:
    stats = StepStats("s")
    for name in ("zeta", "alpha", "mid"):
        stats.add(name)
    assert list(stats.to_dict()["counts"]) == ["alpha", "mid", "zeta"]
