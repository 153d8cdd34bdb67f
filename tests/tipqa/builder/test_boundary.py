"""The boundary steps: a pool's shards dated, the training stream indexed."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from support.tests_support import fetch_from

from tipqa.boundary.records import FirstSeen
from tipqa.builder.boundary import build_training_index, pool_boundary
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import PoolLayout, TrainingIndexLayout
from tipqa.core.records import (
    Decision,
    Document,
    Evidence,
    Judgment,
    Keywords,
    LabeledQuestion,
    Question,
    VectorInstance,
)
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.stages.windows import WindowSettings
from tipqa.training_order.megatron import MegatronOrder, MegatronOrderSettings
from tipqa.training_order.synthetic import train_tokenizer, write_megatron
from tipqa.training_order.table import TableOrder, TableOrderSettings

DOCS = {
    "d1": Document("d1", "Ada Vell was born in Orrin."),
    "d2": Document("d2", "Ada Vell, of Orrin, sang."),
    "d3": Document("d3", "Bo Rill sang in Ulm."),
}

fetch = fetch_from(DOCS)


def write_shard(pool: PoolLayout) -> list[Question]:
    """One shard: q1 answerable by tokens (two relevant documents judged), q2 by vectors, q3
    unanswerable."""
    questions = [
        Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"]),
        Question("q2", "Where did Bo Rill sing?", "Ulm", ["Ulm"]),
        Question("q3", "Who is Cy?", "Nobody", ["Nobody"]),
    ]
    shard = pool.shard(0)
    write_records(shard.questions, questions)
    write_records(
        shard.keywords,
        [Keywords("q1", ["Ada Vell"]), Keywords("q2", ["Bo Rill"]), Keywords("q3", ["Cy"])],
    )
    first = Evidence("token", "d1", "d1@w0", DOCS["d1"].text)
    write_records(
        shard.token_decisions,
        [
            Decision("q1", "answerable", "token", "yes", first, 2, 2),
            Decision("q2", "to_vector", "token", "none", None, 0, 0),
            Decision("q3", "to_vector", "token", "none", None, 0, 0),
        ],
    )
    write_records(
        shard.token_judgments,
        [
            Judgment("q1", "token", "d1", "d1@w0", "yes", "yes", "rules"),
            Judgment("q1", "token", "d2", "d2@w0", "yes", "yes", "rules"),
        ],
    )
    chunk = Evidence("vector", "d3", "d3#0", DOCS["d3"].text)
    write_records(
        shard.vector_decisions,
        [
            Decision("q2", "answerable", "vector", "yes", chunk),
            Decision("q3", "unanswerable", "vector", "no"),
        ],
    )
    write_records(
        shard.instances,
        [
            VectorInstance("q2", "Q?", "Ulm", "d3", "d3#0", DOCS["d3"].text, 0.9, True),
            VectorInstance("q3", "Q?", "Nobody", "d1", "d1#0", DOCS["d1"].text, 0.2, False),
        ],
    )
    return questions


def test_a_pool_is_dated_from_its_shards(tmp_path: Path) -> None:
    pool = PoolLayout(tmp_path / "pools" / "dev")
    questions = write_shard(pool)
    table = tmp_path / "order.csv"
    table.write_text("doc_id,first_step\nd1,70\nd2,20\nd3,50\n", encoding="utf-8")
    order = TableOrder(TableOrderSettings(paths=(str(table),)))
    record = StepRecord(Step.BOUNDARY, {"checkpoints": [10, 30, 60, 100]})
    stats = pool_boundary(
        [(questions, pool.shard(0))],
        fetch,
        WindowSettings(),
        order,
        [100, 10, 30, 60],
        pool.boundary,
        record,
    )
    seen = {s.question_id: s for s in read_records(pool.boundary.first_seen, FirstSeen)}
    assert {qid: s.first_seen_step for qid, s in seen.items()} == {"q1": 20, "q2": 50}
    assert [e.doc_id for e in seen["q1"].relevant] == ["d1", "d2"]
    assert seen["q1"].evidence is not None and seen["q1"].evidence.doc_id == "d2"
    labels = {
        step: [r.label for r in read_records(pool.boundary.checkpoint(step), LabeledQuestion)]
        for step in (10, 30, 60, 100)
    }
    assert labels[10] == ["unanswerable"] * 3
    assert labels[30] == ["answerable", "unanswerable", "unanswerable"]
    assert labels[60] == labels[100] == ["answerable", "answerable", "unanswerable"]
    step30 = read_records(pool.boundary.checkpoint(30), LabeledQuestion)[0]
    assert step30.evidence is not None and step30.evidence.doc_id == "d2"  # d1 came later
    step100 = read_records(pool.boundary.checkpoint(100), LabeledQuestion)[0]
    assert step100.evidence is not None and step100.evidence.doc_id == "d1"  # the ordinary one
    assert read_json(pool.boundary.stats)["fingerprint"] == record.fingerprint
    assert stats.counts["evidence"] == 3


def test_the_index_step_writes_its_stats_last_and_resumes(tmp_path: Path) -> None:
    texts = ["ka lo mi ren tus", "vo shi an del qu", "or ix ka lo vo"] * 20
    tokenizer = train_tokenizer(texts, tmp_path / "tokenizer.json", 300)
    sequences = np.arange(64 * 32, dtype=np.int64).reshape(64, 32) % 50
    write_megatron(sequences, tmp_path / "document")
    settings = MegatronOrderSettings(
        path=str(tmp_path / "document"),
        tokenizer=str(tokenizer),
        seq_length=32,
        batch_size=4,
        range_mb=0,
        progress=False,
    )
    place = TrainingIndexLayout(tmp_path / "index")
    record = StepRecord(Step.TRAINING_INDEX, {"training_order": settings.index_identity()})
    stats = build_training_index(MegatronOrder(settings, place.root), place, record)
    written = read_json(place.stats)
    assert written["step"] == Step.TRAINING_INDEX and written["fingerprint"] == record.fingerprint
    assert stats.counts["sequences"] == 64 and stats.counts["units"] == 64
    again = build_training_index(MegatronOrder(settings, place.root), place, record)
    assert again.counts["units_done_before"] == 64 and "sequences" not in again.counts


class SlowIndex:
    """A training order whose index pass takes a while."""

    def build_index(self) -> StepStats:
        time.sleep(0.3)
        stats = StepStats("anchor_index", info={"folder": "somewhere"})
        stats.add("sequences", 7)
        return stats


def test_the_index_stats_time_the_whole_pass(tmp_path: Path) -> None:
    place = TrainingIndexLayout(tmp_path / "index")
    place.root.mkdir()
    record = StepRecord(Step.TRAINING_INDEX, {})
    build_training_index(SlowIndex(), place, record)
    written = read_json(place.stats)
    assert written["seconds"] >= 0.3
    assert written["counts"] == {"sequences": 7} and written["info"] == {"folder": "somewhere"}
