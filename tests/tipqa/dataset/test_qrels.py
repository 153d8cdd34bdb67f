"""Relevance files: judgments of both stages as TREC qrels and judged units, per pool and split."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from support.partition_fixtures import write_pool

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import PartitionLayout, RunLayout, ShardLayout
from tipqa.core.records import Decision, JudgedUnit, Judgment, Keywords, Question
from tipqa.core.steps import Step
from tipqa.dataset.partition import write_partition
from tipqa.dataset.qrels import (
    QRELS_FILE,
    UNITS_FILE,
    read_qrels,
    shard_units,
    write_relevance,
)
from tipqa.dataset.splits import SplitPlan, make_splits


def judgment(
    qid: str, stage: str, doc: str, unit: str, label: str | None, **kw: object
) -> Judgment:
    return Judgment(qid, stage, doc, unit, label, label or "", "rules", **kw)  # type: ignore[arg-type]


TOKEN = [
    judgment("a", "token", "d1", "d1@w0", "no", start=0, end=40, p_yes=0.2),
    judgment("a", "token", "d1", "d1@w1", "yes", start=52, end=90, p_yes=0.9),
    judgment("b", "token", "d3", "d3@w0", "no", start=5, end=17),
    judgment("b", "token", "d4", "d4@w0", None, error="timeout"),
]
VECTOR = [
    judgment("b", "vector", "d3", "d3#2", "yes", p_yes=0.7),
    judgment("b", "vector", "d5", "d5#0", "no"),
]


def test_both_stages_become_qrels_and_units(tmp_path: Path) -> None:
    shard = ShardLayout(tmp_path / "shard")
    write_records(shard.token_judgments, TOKEN)
    write_records(shard.vector_judgments, VECTOR)
    counts: Counter[str] = Counter()
    units = shard_units(shard, counts)
    assert counts == {"units_failed": 1}
    written = write_relevance([units], tmp_path)

    # d1: a "no" window and a "yes" window -> relevant; d3: "no" window, "yes" chunk -> relevant.
    assert (tmp_path / QRELS_FILE).read_text() == ("a 0 d1 1\nb 0 d3 1\nb 0 d5 0\n")
    assert read_qrels(tmp_path / QRELS_FILE) == {"a": {"d1": 1}, "b": {"d3": 1, "d5": 0}}
    back = read_records(tmp_path / UNITS_FILE, JudgedUnit)
    assert back == units
    assert [(u.stage, u.unit_id, u.relevance, u.start, u.end, u.p_yes) for u in back] == [
        ("token", "d1@w0", 0, 0, 40, 0.2),
        ("token", "d1@w1", 1, 52, 90, 0.9),
        ("token", "d3@w0", 0, 5, 17, None),
        ("vector", "d3#2", 1, None, None, 0.7),
        ("vector", "d5#0", 0, None, None, None),
    ]
    assert written == {
        "units": 5,
        "units_without_offsets": 2,
        "pairs_relevant": 2,
        "pairs_not_relevant": 1,
        "questions_judged": 2,
        "questions_with_relevant": 2,
    }


def test_ids_with_whitespace_are_left_out_of_the_qrels_and_counted(tmp_path: Path) -> None:
    units = [
        JudgedUnit("q1", "token", "web/a b.txt", "web/a b.txt@w0", 1, None, "rules"),
        JudgedUnit("q1", "token", "web/c.txt", "web/c.txt@w0", 1, None, "rules"),
    ]
    counts = write_relevance([units], tmp_path)
    assert (tmp_path / QRELS_FILE).read_text() == "q1 0 web/c.txt 1\n"
    assert counts["pairs_with_whitespace_ids"] == 1
    assert len(read_records(tmp_path / UNITS_FILE, JudgedUnit)) == 2


@pytest.mark.parametrize(
    ("text", "match"),
    [("q1 0 d1\n", "4 fields"), ("q1 0 d1 yes\n", "relevance 'yes' is not an integer")],
)
def test_a_bad_qrels_line_names_file_and_line(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q0 0 d0 1\n" + text)
    with pytest.raises(InputError, match=match) as info:
        read_qrels(path)
    assert info.value.line == 2 and info.value.path == str(path)


def shard_of(root: Path, qid: str, token: list[Judgment], vector: list[Judgment]) -> ShardLayout:
    """A shard of one question that went on to the vector stage, with its judgments."""
    shard = ShardLayout(root)
    write_records(shard.token_decisions, [Decision(qid, "to_vector", "token", "none")])
    write_records(shard.vector_decisions, [Decision(qid, "unanswerable", "vector", "none")])
    write_records(shard.keywords, [Keywords(qid, ["k"])])
    write_records(shard.instances, [])
    write_records(shard.token_judgments, token)
    write_records(shard.vector_judgments, vector)
    return shard


def test_the_partition_writes_the_relevance_files_and_counts_them(tmp_path: Path) -> None:
    first = shard_of(tmp_path / "s0", "b", TOKEN[2:], VECTOR)
    second = shard_of(tmp_path / "s1", "c", [judgment("c", "token", "d8", "d8@w0", "no")], [])
    shards = [
        ([Question(qid, f"{qid}?", "x", ["x"])], shard)
        for qid, shard in (("b", first), ("c", second))
    ]
    out = tmp_path / "partition"
    write_partition(shards, PartitionLayout(out), StepRecord(Step.PARTITION, {}), {"steps": {}})
    assert (out / QRELS_FILE).read_text() == "b 0 d3 1\nb 0 d5 0\nc 0 d8 0\n"
    assert [u.question_id for u in read_records(out / UNITS_FILE, JudgedUnit)] == ["b"] * 3 + ["c"]
    relevance = read_json(out / "stats.json")["info"]["relevance"]
    assert relevance == {
        "units": 4,
        "units_failed": 1,
        "units_without_offsets": 3,
        "pairs_relevant": 1,
        "pairs_not_relevant": 2,
        "questions_judged": 2,
        "questions_with_relevant": 1,
    }


def test_splits_carry_each_question_s_relevance(tmp_path: Path) -> None:
    run = RunLayout(tmp_path)
    dev = write_pool(run, "dev", {"answerable": 2, "unanswerable": 1, "discarded": 1})
    write_pool(run, "train", {"answerable": 1})
    kept = [dev["answerable"][0].id, dev["unanswerable"][0].id]
    left_out = dev["discarded"][0].id
    units = [
        JudgedUnit(kept[0], "token", "d0", "d0@w0", 1, 0.8, "rules", 3, 30),
        JudgedUnit(kept[1], "vector", "d9", "d9#0", 0, None, "rules"),
        JudgedUnit(left_out, "token", "d7", "d7@w0", 0, None, "rules", 0, 9),
    ]
    write_relevance([units], run.pool("dev").partition)
    make_splits(run, SplitPlan("dev", "train", 0, 0), StepRecord(Step.SPLITS, {}))
    test = run.splits / "test"
    assert read_qrels(test / QRELS_FILE) == {kept[0]: {"d0": 1}, kept[1]: {"d9": 0}}
    assert read_records(test / UNITS_FILE, JudgedUnit) == units[:2]
    relevance = read_json(run.splits / "stats.json")["info"]["relevance"]
    assert relevance["test"] == {"qrels_pairs": 2, "judged_units": 2}
    assert relevance["pools_without_relevance"] == {"count": 1}
