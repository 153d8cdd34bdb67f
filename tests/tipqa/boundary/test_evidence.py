"""All relevant evidence of a question, rebuilt from the stages' records, and its first step."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from support.tests_support import fetch_from

from tipqa.boundary.evidence import first_seen, span_id, token_evidence, vector_evidence
from tipqa.boundary.records import FirstSeen
from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_records, write_records
from tipqa.core.records import Document, Evidence, Judgment, Keywords, Question, VectorInstance
from tipqa.core.stats import StepStats
from tipqa.stages.windows import WindowSettings, judge_windows
from tipqa.training_order.base import SpanStep, WantedSpan
from tipqa.training_order.table import TableOrder, TableOrderSettings

WINDOWS = WindowSettings(max_words=12, max_windows=8)
DOCS = {
    "d1": Document("d1", "Ada Vell was born in Orrin.\n\nRain fell.\n\nAda Vell loved Orrin."),
    "d2": Document("d2", "Nothing here.\n\nAda Vell sailed from Orrin at dawn."),
}
QUESTION = Question("q1", "Where was Ada Vell born?", "Orrin", ["Orrin"])
KEYWORDS = {"q1": Keywords("q1", ["Ada Vell"])}

fetch = fetch_from(DOCS)


def judgment(doc_id: str, window: int, label: str | None, qid: str = "q1") -> Judgment:
    return Judgment(qid, "token", doc_id, f"{doc_id}@w{window}", label, "", "table")  # type: ignore[arg-type]


def test_token_evidence_rebuilds_the_yes_windows_in_order() -> None:
    judgments = [
        judgment("d1", 0, "no"),
        judgment("d1", 1, "yes"),
        judgment("d2", 0, "yes"),
        judgment("d2", 0, "yes"),
        judgment("d1", 0, None),
        judgment("d1", 0, "yes", qid="other"),
    ]
    found = token_evidence([QUESTION], KEYWORDS, judgments, fetch, WINDOWS)
    windows_d1, _ = judge_windows(DOCS["d1"], ["Ada Vell"], ["Orrin"], WINDOWS)
    windows_d2, _ = judge_windows(DOCS["d2"], ["Ada Vell"], ["Orrin"], WINDOWS)
    assert found == {
        "q1": [
            Evidence("token", "d1", "d1@w1", windows_d1[1].text),
            Evidence("token", "d2", "d2@w0", windows_d2[0].text),
        ]
    }
    assert windows_d1[1].text == "Ada Vell loved Orrin."


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (judgment("gone", 0, "yes"), "relevant document 'gone' is not in the token index"),
        (judgment("d1", 9, "yes"), "window 'd1@w9' does not exist"),
        (
            Judgment("q1", "token", "d1", "d1-chunk", "yes", "", "table"),
            "not a token-stage window id",
        ),
    ],
)
def test_token_evidence_errors(item: Judgment, message: str) -> None:
    with pytest.raises(InputError, match=message):
        token_evidence([QUESTION], KEYWORDS, [item], fetch, WINDOWS)


def test_vector_evidence_keeps_relevant_chunks() -> None:
    instances = [
        VectorInstance("q1", "Q?", "A", "d1", "d1#0", "one", 0.9, True),
        VectorInstance("q1", "Q?", "A", "d2", "d2#3", "two", 0.8, False),
        VectorInstance("q2", "Q?", "A", "d2", "d2#1", "three", 0.7, None),
        VectorInstance("q1", "Q?", "A", "d2", "d2#1", "four", 0.6, True),
    ]
    assert vector_evidence(instances) == {
        "q1": [Evidence("vector", "d1", "d1#0", "one"), Evidence("vector", "d2", "d2#1", "four")]
    }


def test_first_seen_is_the_smallest_step_over_all_evidence(tmp_path: Path) -> None:
    table = tmp_path / "order.csv"
    table.write_text("doc_id,first_step\nd1,50\nd2,10\nd3,10\n", encoding="utf-8")
    order = TableOrder(TableOrderSettings(paths=(str(table),)))
    e1 = Evidence("token", "d1", "d1@w0", "first window")
    e2 = Evidence("vector", "d2", "d2#0", "a chunk")
    e3 = Evidence("token", "d3", "d3@w0", "same")
    e4 = Evidence("token", "d4", "d4@w0", "not in the table")
    evidence = {"q1": [e1, e2, e3], "q2": [e1], "q3": [e4]}
    seen = first_seen(evidence, order, fetch)
    assert seen["q1"].first_seen_step == 10 and seen["q1"].evidence == e2
    assert [r.step for r in seen["q1"].relevant] == [50, 10, 10]
    assert seen["q2"].first_seen_step == 50 and seen["q2"].evidence == e1
    assert seen["q3"] == FirstSeen("q3", None, None, seen["q3"].relevant)
    assert seen["q3"].relevant[0].step is None
    assert FirstSeen.from_dict(seen["q1"].to_dict()) == seen["q1"]
    assert order.stats.counts["spans_found"] == 3  # e1 is asked once for two questions
    assert span_id(e1) != span_id(Evidence("token", "d1", "d1@w1", "other window"))


class Bounded:
    """A training order that dates documents by a table, some steps only upper bounds."""

    def __init__(self, steps: dict[str, tuple[int | None, bool]]) -> None:
        self.steps = steps

    def first_steps(self, spans: Sequence[WantedSpan], fetch: object) -> dict[str, SpanStep]:
        return {
            s.span_id: SpanStep(s.span_id, s.doc_id, self.steps[s.doc_id][0], "window",
                                exact=self.steps[s.doc_id][1])
            for s in spans
        }  # fmt: skip


def test_an_upper_bound_is_told_from_an_exact_step(tmp_path: Path) -> None:
    order = Bounded({"d1": (30, True), "d2": (80, False), "d3": (None, False)})
    e1 = Evidence("token", "d1", "d1@w0", "exact")
    e2 = Evidence("token", "d2", "d2@w0", "upper bound")
    e3 = Evidence("vector", "d3", "d3#0", "never placed")
    stats = StepStats("boundary")
    seen = first_seen({"q1": [e1], "q2": [e2], "q3": [e1, e2], "q4": [e3]}, order, fetch, stats)
    assert [r.exact for r in seen["q3"].relevant] == [True, False]
    assert (seen["q1"].first_seen_step, seen["q1"].exact) == (30, True)
    assert (seen["q2"].first_seen_step, seen["q2"].exact) == (80, False)
    assert (seen["q3"].first_seen_step, seen["q3"].exact) == (30, False)  # d2 may be earlier
    assert (seen["q4"].first_seen_step, seen["q4"].exact) == (None, False)
    write_records(tmp_path / "first_seen.jsonl", seen.values())
    lines = [json.loads(line) for line in (tmp_path / "first_seen.jsonl").read_text().splitlines()]
    assert [line["exact"] for line in lines] == [True, False, False, False]
    assert [r["exact"] for r in lines[2]["relevant"]] == [True, False]
    assert read_records(tmp_path / "first_seen.jsonl", FirstSeen) == list(seen.values())
    assert stats.counts["questions_seen_upper_bound"] == 2
    assert stats.counts["evidence_upper_bound"] == 3
    old = {"question_id": "q", "first_seen_step": 5, "evidence": None, "relevant": [
        {"stage": "token", "doc_id": "d", "unit_id": "d@w0", "text": "t", "step": 5,
         "matched": "window"}]}  # fmt: skip
    assert FirstSeen.from_dict(old).exact and FirstSeen.from_dict(old).relevant[0].exact
