"""Breakdowns by deciding stage and by keyword-matching documents (figure 3's bins)."""

from __future__ import annotations

import pytest
from support.evaluate_support import labeled

from tipqa.evaluate.breakdown import by_matches, by_stage
from tipqa.evaluate.metrics import score_question
from tipqa.evaluate.refusal import Reading


def test_rows_by_stage_and_by_bin() -> None:
    cases = [
        (labeled("t1", "answerable", "Paris", total_matches=1), "Paris"),
        (labeled("t2", "answerable", "Rome", total_matches=7), "Milan"),
        (labeled("v1", "answerable", "Nile", stage="vector", total_matches=0), ""),
        (labeled("v2", "unanswerable", "Oslo", total_matches=0), ""),
        (labeled("v3", "unanswerable", "Lima", total_matches=20_000), "Cusco"),
        (labeled("v4", "unanswerable", "Bern", total_matches=None), "Bern"),
    ]
    scored = [score_question(q, Reading(a, refused=not a)) for q, a in cases]
    stage = {row["group"]: row for row in by_stage(scored)}
    assert list(stage) == ["token", "vector"]
    assert stage["token"]["counts"] == {"TP": 1, "FP_a": 1, "FP_u": 0, "FN": 0, "TN": 0}
    # token: TP 1, FP_a 1 -> P = 1 / 2, R = 1 / 2, EM-F1 = 1 / 2; PM = (1 + 0) / 2
    assert stage["token"]["em_f1"] == pytest.approx(0.5)
    assert stage["token"]["pm_f1"] == pytest.approx(0.5)
    assert stage["vector"]["counts"] == {"TP": 0, "FP_a": 0, "FP_u": 2, "FN": 1, "TN": 1}
    assert stage["vector"]["refusal_rate_unanswerable"] == pytest.approx(1 / 3)
    bins = {row["group"]: row["questions"] for row in by_matches(scored)}
    assert bins == {"0": 2, "1": 1, "2-10": 1, ">10,000": 1, "unknown": 1}
