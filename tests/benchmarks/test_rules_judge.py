"""The rules-judge benchmark's judging and counting, on authored pairs and the shared sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.rules_judge import READING, Pair, judge_pair, official_pairs, summarise
from tipqa.core.records import Document, Question
from tipqa.llm.judges.rules import RuleJudge

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"

QUESTION = Question(
    "q1", "Which harbour did the ketch Saltwren leave in 1802?", "Port Ellery", ["Port Ellery"]
)
STATED = Document("d1", "Old logs survive.\n\nThe Saltwren left Port Ellery in 1802 for the north.")
APART = Document("d2", "The Saltwren was built in 1802.\n\nPort Ellery is a quiet town.")
ELSEWHERE = Document("d3", "Port Ellery hosts a fair every spring.")


def test_a_stated_fact_is_accepted_and_one_spread_over_paragraphs_is_not() -> None:
    judge = RuleJudge()
    stated = judge_pair(Pair(QUESTION, STATED, "answers", True), judge)
    apart = judge_pair(Pair(QUESTION, APART, "answers", True), judge)
    elsewhere = judge_pair(Pair(QUESTION, ELSEWHERE, "cross", False), judge)
    assert (stated.accepted, stated.searchable) == (True, True)
    assert (apart.accepted, apart.searchable) == (False, True)
    assert (elsewhere.accepted, elsewhere.searchable) == (False, False)
    figures = summarise([stated, apart, elsewhere], [stated.pair, apart.pair])
    assert figures["answering_pairs"] == 2 and figures["accepted_answering"] == 1
    assert figures["recall"] == 0.5 and figures["precision"] == 1.0
    assert figures["found_by_token_search"] == 2
    assert figures["questions_with_an_accepted_document"] == 1
    assert figures["pairs_by_group"] == {"answers": 2, "cross": 1}


@pytest.mark.skipif(not (SHARED / "triviaqa").is_dir(), reason="shared sample data absent")
def test_every_own_evidence_pair_of_the_sample_has_a_reading() -> None:
    own, cross = official_pairs(SHARED)
    assert {(p.question.id, p.document.id) for p in own} == set(READING)
    assert all(not p.answers and p.group == "cross" for p in cross)
