"""The paper's metrics on authored examples, every value computed by hand."""

from __future__ import annotations

import pytest
from support.evaluate_support import labeled

from tipqa.evaluate.metrics import cell_of, honesty_scores, score_question, summary
from tipqa.evaluate.refusal import Reading, RefusalDetector

GOLD = [
    labeled("q1", "answerable", "Paris", ["City of Paris"]),
    labeled("q2", "answerable", "Mount Everest"),
    labeled("q3", "answerable", "Nile"),
    labeled("q4", "unanswerable", "Oslo"),
    labeled("q5", "unanswerable", "Rome"),
    labeled("q6", "unanswerable", "Lima"),
    labeled("q7", "answerable", "George Washington"),
]
RESPONSES = [
    "The City of Paris!",  # TP: the alias, after normalisation
    "K2",  # FP_a
    "I don't know",  # FN (phrase)
    "Lisbon",  # FP_u
    "",  # TN (empty)
    "I do not know.",  # TN (phrase)
    "Washington",  # FP_a, token F1 2/3
]


def scored(detector: RefusalDetector, responses: list[str], gold=GOLD) -> list:
    readings = detector.read(responses, [None] * len(responses))
    return [score_question(q, r) for q, r in zip(gold, readings, strict=True)]


def test_every_cell() -> None:
    assert cell_of("answerable", refused=False, correct=True) == "TP"
    assert cell_of("answerable", refused=False, correct=False) == "FP_a"
    assert cell_of("answerable", refused=True, correct=False) == "FN"
    assert cell_of("unanswerable", refused=False, correct=False) == "FP_u"
    assert cell_of("unanswerable", refused=False, correct=True) == "FP_u"
    assert cell_of("unanswerable", refused=True, correct=False) == "TN"


def test_summary_by_hand(rules_detector: RefusalDetector) -> None:
    result = summary(scored(rules_detector, RESPONSES))
    assert [item for item in result["counts"].items()] == [
        ("TP", 1),
        ("FP_a", 2),
        ("FP_u", 1),
        ("FN", 1),
        ("TN", 2),
    ]
    # P = 1 / (1 + 1 + 2) = 0.25; R = 1 / (1 + 2 + 1) = 0.25; EM-F1 = 0.25
    assert result["precision"] == pytest.approx(0.25)
    assert result["recall"] == pytest.approx(0.25)
    assert result["em_f1"] == pytest.approx(0.25)
    # PM: q1 1, q2 0, q3 0 (refused), q4 0 (answered), q5 1, q6 1, q7 2/3 -> (3 + 2/3) / 7
    assert result["pm_f1"] == pytest.approx((3 + 2 / 3) / 7)
    assert result["accuracy_answerable"] == pytest.approx(1 / 4)
    assert result["refusal_rate_answerable"] == pytest.approx(1 / 4)
    assert result["refusal_rate_unanswerable"] == pytest.approx(2 / 3)
    assert result["quadrant"] == {
        "N1_known_known": 1,
        "N2_known_unknown": 2,
        "N3_unknown_known": 3,
        "N4_unknown_unknown": 1,
    }
    assert result["refusals_by_kind"]["phrase"] == 2
    assert result["refusals_by_kind"]["empty"] == 1


def test_three_scripted_systems(rules_detector: RefusalDetector) -> None:
    answerable = [q for q in GOLD if q.label == "answerable"]
    gold_answers = summary(scored(rules_detector, [q.answer for q in GOLD]))
    # always the gold answer: TP = 4, FP_u = 3; P = 4/7, R = 1, EM-F1 = 2 * (4/7) / (11/7) = 8/11
    assert gold_answers["counts"] == {"TP": 4, "FP_a": 0, "FP_u": 3, "FN": 0, "TN": 0}
    assert gold_answers["em_f1"] == pytest.approx(8 / 11)
    assert gold_answers["pm_f1"] == pytest.approx(4 / 7)
    refuse = summary(scored(rules_detector, ["I don't know"] * len(GOLD)))
    # always refuse: no answer at all, P = R = 0 (0/0 is 0), EM-F1 = 0, PM-F1 = 3/7
    assert refuse["counts"] == {"TP": 0, "FP_a": 0, "FP_u": 0, "FN": 4, "TN": 3}
    assert (refuse["precision"], refuse["recall"], refuse["em_f1"]) == (0.0, 0.0, 0.0)
    assert refuse["pm_f1"] == pytest.approx(3 / 7)
    oracle = [q.answer if q in answerable else "I don't know" for q in GOLD]
    perfect = summary(scored(rules_detector, oracle))
    assert perfect["counts"] == {"TP": 4, "FP_a": 0, "FP_u": 0, "FN": 0, "TN": 3}
    assert (perfect["em_f1"], perfect["pm_f1"]) == (1.0, 1.0)


def test_empty_predictions_are_refusals(rules_detector: RefusalDetector) -> None:
    result = summary(scored(rules_detector, ["", "   ", "the", "?!", "", "", ""]))
    assert result["counts"] == {"TP": 0, "FP_a": 0, "FP_u": 0, "FN": 4, "TN": 3}
    assert result["refusals_by_kind"]["empty"] == 7


def test_ties_in_precision_and_recall() -> None:
    # P = R: F1 equals both; TP = 0 with answers: P = R = F1 = 0
    precision, recall, f1 = honesty_scores([2, 1, 1, 1, 0])
    assert precision == pytest.approx(0.5) and recall == pytest.approx(0.5)
    assert f1 == pytest.approx(0.5)
    assert honesty_scores([0, 3, 2, 1, 4]) == (0.0, 0.0, 0.0)
    assert honesty_scores([0, 0, 0, 0, 0]) == (0.0, 0.0, 0.0)


def test_explicit_signal_overrides_the_text() -> None:
    question = labeled("q", "unanswerable", "Oslo")
    assert score_question(question, Reading("Oslo", True, "explicit")).cell == "TN"
    assert score_question(question, Reading("I don't know", False)).cell == "FP_u"
