"""The partition: token and vector decisions joined per question, written per label and as HF."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import load_from_disk

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records, write_json, write_records
from tipqa.core.layout import PartitionLayout, ShardLayout
from tipqa.core.records import (
    LABELS,
    Decision,
    Evidence,
    Keywords,
    LabeledQuestion,
    Question,
    VectorInstance,
)
from tipqa.core.steps import Step
from tipqa.dataset.partition import label_questions, write_partition


def q(qid: str) -> Question:
    return Question(qid, f"Question {qid}?", f"answer {qid}", [f"answer {qid}", qid])


def shard_with(
    root: Path,
    token: list[Decision],
    vector: list[Decision],
    instances: list[VectorInstance] = (),
) -> ShardLayout:
    """A shard folder holding the step files that the partition reads."""
    shard = ShardLayout(root)
    write_records(shard.token_decisions, token)
    write_records(shard.vector_decisions, vector)
    write_records(shard.keywords, [Keywords(d.question_id, [f"kw {d.question_id}"]) for d in token])
    write_records(shard.instances, list(instances))
    write_records(shard.token_judgments, [])
    write_records(shard.vector_judgments, [])
    return shard


def instance(qid: str, chunk: str, relevant: bool | None) -> VectorInstance:
    return VectorInstance(qid, f"Question {qid}?", f"answer {qid}", "d", chunk, "t", 0.5, relevant)


TOKEN_EVIDENCE = Evidence("token", "d1", "d1@w0", "the fact")
VECTOR_EVIDENCE = Evidence("vector", "d2", "d2#c3", "the chunk")


def first_shard(root: Path) -> ShardLayout:
    token = [
        Decision("a", "answerable", "token", "yes at rank 1", TOKEN_EVIDENCE, 4, 1),
        Decision("b", "to_vector", "token", "none relevant", None, 2, 2),
        Decision("c", "to_vector", "token", "no match", None, 0, 0),
        Decision("d", "discarded", "token", "too many", None, 300, 100),
    ]
    vector = [
        Decision("b", "unanswerable", "vector", "no chunk relevant", None, None, 2),
        Decision("c", "answerable", "vector", "a chunk", VECTOR_EVIDENCE, None, 2),
    ]
    instances = [instance("b", "b0", False), instance("b", "b1", None), instance("c", "c0", True)]
    return shard_with(root, token, vector, instances)


def test_label_questions_joins_token_and_vector(tmp_path: Path) -> None:
    shard = first_shard(tmp_path / "s0")
    rows = label_questions([q("a"), q("b"), q("c"), q("d")], shard)
    assert [(r.id, r.label, r.stage) for r in rows] == [
        ("a", "answerable", "token"),
        ("b", "unanswerable", "vector"),
        ("c", "answerable", "vector"),
        ("d", "discarded", "token"),
    ]
    a, b, c, d = rows
    assert a.evidence == TOKEN_EVIDENCE and c.evidence == VECTOR_EVIDENCE
    assert b.evidence is None and d.evidence is None
    assert [r.total_matches for r in rows] == [4, 2, 0, 300]
    assert b.reason == "no chunk relevant"
    assert a.keywords == ["kw a"]
    assert (a.question, a.answer, a.aliases) == ("Question a?", "answer a", ["answer a", "a"])


def test_to_vector_without_a_vector_decision_raises(tmp_path: Path) -> None:
    shard = shard_with(
        tmp_path / "s0", [Decision("x", "to_vector", "token", "none relevant", None, 1, 1)], []
    )
    with pytest.raises(RuntimeError, match=r"question x has no vector-stage decision"):
        label_questions([q("x")], shard)


def test_question_without_any_decision_names_the_shard(tmp_path: Path) -> None:
    # Shards built earlier with another shard_size or question list look finished to Luigi.
    shard = first_shard(tmp_path / "s0")
    with pytest.raises(InputError, match="question z has no decision") as info:
        label_questions([q("a"), q("z")], shard)
    assert info.value.path == str(shard.token_decisions)


def test_write_partition_files_stats_and_dataset(tmp_path: Path) -> None:
    second = shard_with(
        tmp_path / "s1",
        [Decision("e", "answerable", "token", "yes", TOKEN_EVIDENCE, 1, 1)],
        [],
    )
    shards = [([q("a"), q("b"), q("c"), q("d")], first_shard(tmp_path / "s0")), ([q("e")], second)]
    judged = {"counts": {"VLLMJudge.engine_starts": 1, "VLLMJudge.requests": 9}}
    write_json(second.stats("token_judge"), judged)
    write_json(second.stats("keywords"), {"counts": {"VLLMKeywordExtractor.engine_starts": 1}})
    out = tmp_path / "partition"
    stats = write_partition(
        shards, PartitionLayout(out), StepRecord(Step.PARTITION, {"pool": "dev"}), {"steps": {}}
    )

    labelled = {label: read_records(out / f"{label}.jsonl", LabeledQuestion) for label in LABELS}
    assert {k: [r.id for r in v] for k, v in labelled.items()} == {
        "answerable": ["a", "c", "e"],
        "unanswerable": ["b"],
        "discarded": ["d"],
        "undetermined": [],
    }
    assert [i.chunk_id for i in read_records(out / "instances.jsonl", VectorInstance)] == [
        "b0", "b1", "c0",
    ]  # fmt: skip

    data = read_json(out / "stats.json")
    assert data["counts"] == {
        "answerable": 3, "unanswerable": 1, "discarded": 1, "undetermined": 0,
        "questions": 5, "instances": 3,
    }  # fmt: skip
    assert data["info"]["build"] == {"steps": {}}
    assert data["info"]["llm_engine_starts"] == 2
    assert data["provenance"]["settings"] == {"pool": "dev"}
    assert data["info"]["by_stage"] == {
        "answerable_token": 2, "answerable_vector": 1, "discarded_token": 1,
        "unanswerable_vector": 1,
    }  # fmt: skip
    assert stats.counts["questions"] == 5

    loaded = load_from_disk(str(out / "hf"))
    assert sorted(loaded) == sorted([*LABELS, "instances"])
    assert loaded["undetermined"].num_rows == 0
    assert "evidence_doc_id" in loaded["undetermined"].column_names
    answerable = loaded["answerable"]
    assert answerable["id"] == ["a", "c", "e"]
    assert answerable["evidence_stage"] == ["token", "vector", "token"]
    assert answerable["evidence_unit_id"] == ["d1@w0", "d2#c3", "d1@w0"]
    assert answerable["total_matches"] == [4, 0, 1]
    assert loaded["unanswerable"]["evidence_doc_id"] == [None]
    assert loaded["unanswerable"]["aliases"] == [["answer b", "b"]]
    assert loaded["instances"]["relevant"] == [False, None, True]
    assert not (out / "hf.partial").exists()


def test_write_partition_again_replaces_the_dataset(tmp_path: Path) -> None:
    out = tmp_path / "partition"
    shard = shard_with(
        tmp_path / "s0", [Decision("e", "discarded", "token", "many", None, 9, 2)], []
    )
    write_partition([([q("e")], shard)], PartitionLayout(out), StepRecord(Step.PARTITION, {}), {})
    shard = shard_with(
        tmp_path / "s0", [Decision("e", "answerable", "token", "yes", TOKEN_EVIDENCE, 9, 1)], []
    )
    write_partition([([q("e")], shard)], PartitionLayout(out), StepRecord(Step.PARTITION, {}), {})
    loaded = load_from_disk(str(out / "hf"))
    assert (loaded["answerable"].num_rows, loaded["discarded"].num_rows) == (1, 0)
    assert read_records(out / "discarded.jsonl", LabeledQuestion) == []
    assert not (out / "hf.partial").exists()


def test_the_questions_left_without_keywords_are_counted(tmp_path: Path) -> None:
    shard = first_shard(tmp_path / "s0")
    write_records(
        shard.keywords,
        [Keywords("a", ["kw a"]), Keywords("b", []), Keywords("c", []), Keywords("d", ["kw"])],
    )
    shards = [([q("a"), q("b"), q("c"), q("d")], shard)]
    out = tmp_path / "partition"
    write_partition(shards, PartitionLayout(out), StepRecord(Step.PARTITION, {}), {})
    assert read_json(out / "stats.json")["info"]["no_keywords"] == 2
