"""Scoring a predictions file end to end: the JSON, the report, the figures, comparisons."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.evaluate_support import labeled, write_lines, write_split

from tipqa.core.errors import ConfigError
from tipqa.core.jsonl import read_json
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.refusal import RefusalDetector
from tipqa.evaluate.score import ScoringSettings, compare_systems, score_file, write_evaluation

ROWS = [
    labeled("a1", "answerable", "Paris", ["City of Paris"], total_matches=1),
    labeled("a2", "answerable", "Nile", total_matches=50, stage="vector"),
    labeled("a3", "answerable", "Jupiter", total_matches=50),
    labeled("u1", "unanswerable", "Oslo", total_matches=0),
    labeled("u2", "unanswerable", "Rome", total_matches=None),
]


@pytest.fixture
def gold(tmp_path: Path):
    return load_gold(write_split(tmp_path, ROWS))


def test_scores_report_and_figures(tmp_path: Path, gold, rules_detector: RefusalDetector) -> None:
    predictions = write_lines(
        tmp_path / "p.jsonl",
        [
            {"id": "a1", "prediction": "city of paris", "confidence": 0.9},
            {"id": "a2", "prediction": "\\boxed{<MODEL_UNCERTAIN>}", "confidence": 0.2},
            {"id": "u1", "prediction": "Bergen", "confidence": 0.6},
            {"id": "u2", "prediction": "whatever", "refused": True},
        ],
    )
    with pytest.raises(Exception, match="1 of 5 gold questions have no prediction"):
        score_file(gold, predictions, rules_detector, ScoringSettings())
    result, scored = score_file(
        gold, predictions, rules_detector, ScoringSettings(bootstrap=50), allow_missing=True
    )
    metrics = result["metrics"]
    assert metrics["counts"] == {"TP": 1, "FP_a": 0, "FP_u": 1, "FN": 2, "TN": 1}
    assert metrics["refusals_by_kind"]["missing"] == 1
    assert metrics["refusals_by_kind"]["boxed_model_uncertain"] == 1
    assert metrics["refusals_by_kind"]["explicit"] == 1
    assert result["predictions"]["missing_scored_as_refusals"] == 1
    assert result["confidence"]["predictions_with_confidence"] == 3
    # correct: only a1 (0.9); ECE over three single-item bins: (0.1 + 0.2 + 0.6) / 3
    assert result["confidence"]["ece_equal_width"] == pytest.approx(0.3)
    assert [row["group"] for row in result["breakdowns"]["stage"]] == ["token", "vector"]
    assert [row["group"] for row in result["breakdowns"]["matches"]] == [
        "0",
        "1",
        "11-100",
        "unknown",
    ]
    out = tmp_path / "out"
    write_evaluation(result, scored, out)
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "breakdown-matches.png",
        "breakdown-stage.png",
        "evaluate.stats.json",
        "reliability.png",
        "report.md",
        "scored.jsonl",
        "scores.json",
    ]
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    written = read_json(out / "scores.json")
    assert isinstance(written, dict)
    assert written["metrics"]["em_f1"] == pytest.approx(metrics["em_f1"])
    report = (out / "report.md").read_text()
    assert "| 1 | 0 | 1 | 2 | 1 |" in report
    assert "N3 = 2" in report and "![Reliability diagrams](reliability.png)" in report
    assert "Questions without a prediction, scored as refusals: 1." in report
    assert len((out / "scored.jsonl").read_text().splitlines()) == 5


def test_without_confidences_no_calibration(tmp_path: Path, gold, rules_detector) -> None:
    predictions = write_lines(
        tmp_path / "p.jsonl", [{"id": r.id, "prediction": r.answer} for r in ROWS]
    )
    result, scored = score_file(gold, predictions, rules_detector, ScoringSettings(bootstrap=10))
    assert result["confidence"] == {"predictions_with_confidence": 0}
    assert "ece" not in result["intervals"]
    write_evaluation(result, scored, tmp_path / "out")
    assert not (tmp_path / "out" / "reliability.png").exists()
    assert "no calibration measures" in (tmp_path / "out" / "report.md").read_text()


def test_a_split_without_answerable_questions_is_warned_about(
    tmp_path: Path, rules_detector: RefusalDetector
) -> None:
    unanswerable = [row for row in ROWS if row.label == "unanswerable"]
    split = load_gold(write_split(tmp_path, unanswerable))
    rows = [{"id": r.id, "prediction": "I don't know"} for r in unanswerable]
    predictions = write_lines(tmp_path / "p.jsonl", rows)
    result, scored = score_file(split, predictions, rules_detector, ScoringSettings(bootstrap=10))
    assert result["metrics"]["em_f1"] == 0
    assert "has no answerable question: EM-F1" in result["warnings"][0]
    write_evaluation(result, scored, tmp_path / "out")
    assert "**Warning:** split 'test' of" in (tmp_path / "out" / "report.md").read_text()


def test_compare(tmp_path: Path, gold, rules_detector: RefusalDetector) -> None:
    oracle = [{"id": r.id, "prediction": r.answer if r.label == "answerable" else ""} for r in ROWS]
    everything = [{"id": r.id, "prediction": r.answer} for r in ROWS]
    paths = [
        write_lines(tmp_path / "oracle.jsonl", oracle),
        write_lines(tmp_path / "all.jsonl", everything),
    ]
    result = compare_systems(gold, paths, rules_detector, ScoringSettings(), trials=200)
    assert result["systems"]["oracle"]["em_f1"] == 1.0
    # all answered: P = 3/5, R = 1, EM-F1 = 2 * 0.6 / 1.6 = 0.75
    assert result["systems"]["all"]["em_f1"] == pytest.approx(0.75)
    assert [(t["a"], t["b"], t["metric"]) for t in result["tests"]] == [
        ("oracle", "all", "em_f1"),
        ("oracle", "all", "pm_f1"),
    ]
    assert result["tests"][1]["difference"] == pytest.approx(2 / 5)
    with pytest.raises(ConfigError, match="at least two"):
        compare_systems(gold, paths[:1], rules_detector, ScoringSettings())
