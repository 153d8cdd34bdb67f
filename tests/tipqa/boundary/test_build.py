"""The boundary step: checkpoint settings, relevant evidence of a shard, the files written."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tests_support import fetch_from

from tipqa.boundary.build import (
    PYTHIA_CHECKPOINTS,
    BoundarySettings,
    expand_checkpoints,
    relevant_evidence,
    write_boundary,
)
from tipqa.boundary.records import FirstSeen
from tipqa.core.errors import ConfigError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import BoundaryLayout
from tipqa.core.records import (
    Document,
    Evidence,
    Judgment,
    Keywords,
    LabeledQuestion,
    Question,
    VectorInstance,
)
from tipqa.core.settings import parse
from tipqa.core.steps import Step
from tipqa.stages.windows import WindowSettings
from tipqa.training_order.table import TableOrder, TableOrderSettings


def test_checkpoint_lists() -> None:
    assert expand_checkpoints(["1000", "2000", "...", "5000"]) == (1000, 2000, 3000, 4000, 5000)
    assert expand_checkpoints(["0, 10, ..., 40, 77"]) == (0, 10, 20, 30, 40, 77)
    assert expand_checkpoints(["pythia"]) == PYTHIA_CHECKPOINTS
    assert len(PYTHIA_CHECKPOINTS) == 154 and PYTHIA_CHECKPOINTS[-1] == 143_000
    assert expand_checkpoints([]) == ()
    for bad in (["1000", "..."], ["5", "...", "9"], ["x"], ["2", "1", "...", "9"]):
        with pytest.raises(ValueError, match="checkpoints"):
            expand_checkpoints(bad)


def test_boundary_settings_from_a_config_section() -> None:
    settings = parse(
        BoundarySettings,
        "boundary",
        {"judge_all_candidates": "true", "checkpoints": "1000, 2000, ..., 143000"},
    )
    assert settings.judge_all_candidates and len(settings.steps()) == 143
    with pytest.raises(ConfigError, match=r"\[boundary\] checkpoints: 'soon'"):
        parse(BoundarySettings, "boundary", {"checkpoints": "1000, soon"})


DOCS = {
    "d1": Document("d1", "Ada Vell was born in Orrin.\n\nRain."),
    "d2": Document("d2", "Ada Vell left Orrin."),
    "d3": Document("d3", "Bo Rill sang in Ulm."),
}

fetch = fetch_from(DOCS)


def test_write_boundary_files(tmp_path: Path) -> None:
    questions = [
        Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"]),
        Question("q2", "Where did Bo Rill sing?", "Ulm", ["Ulm"]),
        Question("q3", "Who?", "Nobody", ["Nobody"]),
    ]
    keywords = {"q1": Keywords("q1", ["Ada Vell"]), "q2": Keywords("q2", ["Bo Rill"])}
    judgments = [
        Judgment("q1", "token", "d1", "d1@w0", "yes", "", "rules"),
        Judgment("q1", "token", "d2", "d2@w0", "yes", "", "rules"),
    ]
    instances = [VectorInstance("q2", "Q?", "Ulm", "d3", "d3#0", "Bo Rill sang in Ulm.", 0.9, True)]
    evidence = relevant_evidence(
        questions, {"q1", "q2"}, keywords, judgments, instances, fetch, WindowSettings()
    )
    assert [e.doc_id for e in evidence["q1"]] == ["d1", "d2"]
    assert evidence["q2"] == [Evidence("vector", "d3", "d3#0", "Bo Rill sang in Ulm.")]
    table = tmp_path / "order.csv"
    table.write_text("doc_id,first_step\nd1,900\nd2,40\nd3,3000\n", encoding="utf-8")
    rows = [
        LabeledQuestion("q1", "Q1?", "Orrin", ["Orrin"], "answerable", "token", "r", ["Ada Vell"],
                        2, evidence["q1"][0]),
        LabeledQuestion("q2", "Q2?", "Ulm", ["Ulm"], "answerable", "vector", "r", ["Bo Rill"], 0,
                        evidence["q2"][0]),
        LabeledQuestion("q3", "Q3?", "Nobody", ["Nobody"], "unanswerable", "vector", "r", [], 0,
                        None),
    ]  # fmt: skip
    order = TableOrder(TableOrderSettings(paths=(str(table),)))
    out = BoundaryLayout(tmp_path / "boundary")
    record = StepRecord(Step.BOUNDARY, {"checkpoints": [0, 1000, 143_000]})
    out.root.mkdir()
    out.checkpoint(5).write_text("an earlier build's checkpoint\n")
    stats = write_boundary(rows, evidence, order, fetch, [1000, 0, 143_000], out, record)
    assert out.checkpoint_files() == sorted(out.checkpoint(s) for s in (0, 1000, 143_000))
    seen = read_records(out.first_seen, FirstSeen)
    assert [(s.question_id, s.first_seen_step) for s in seen] == [("q1", 40), ("q2", 3000)]
    labels = {
        step: [r.label for r in read_records(out.checkpoint(step), LabeledQuestion)]
        for step in (0, 1000, 143_000)
    }
    assert labels == {
        0: ["unanswerable"] * 3,
        1000: ["answerable", "unanswerable", "unanswerable"],
        143_000: ["answerable", "answerable", "unanswerable"],
    }
    assert read_records(out.checkpoint(143_000), LabeledQuestion) == rows
    shares = read_json(out.shares)
    assert [s["answerable_share"] for s in shares] == [0.0, 1 / 3, 2 / 3]
    assert out.figure.stat().st_size > 0
    written = read_json(out.stats)
    assert written["counts"]["answerable"] == 2
    assert written["step"] == Step.BOUNDARY and written["fingerprint"] == record.fingerprint
    assert stats.counts["training_order.spans_found"] == 3
