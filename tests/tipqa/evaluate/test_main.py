"""`python -m tipqa.evaluate`: score and compare from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.evaluate_support import labeled, write_lines, write_split

from tipqa.evaluate.__main__ import run

ROWS = [
    labeled("a1", "answerable", "Paris"),
    labeled("a2", "answerable", "Nile"),
    labeled("u1", "unanswerable", "Oslo"),
]


def test_score_prints_json_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = write_split(tmp_path, ROWS)
    predictions = write_lines(tmp_path / "p.jsonl", [{"id": "a1", "prediction": "Paris"}])
    out = tmp_path / "out"
    status = run(
        [
            str(gold),
            str(predictions),
            "--out",
            str(out),
            "--allow-missing",
            "--no-embedding",
            "--bootstrap",
            "20",
        ]
    )
    assert status == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"]["counts"] == {"TP": 1, "FP_a": 0, "FP_u": 0, "FN": 1, "TN": 1}
    assert printed["settings"]["refusal"]["embedding"] is False
    assert printed["settings"]["scoring"]["bootstrap"] == 20
    assert json.loads((out / "scores.json").read_text()) == printed
    assert (out / "report.md").is_file()


def test_compare_prints_the_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_split(tmp_path, ROWS)
    a = write_lines(tmp_path / "a.jsonl", [{"id": r.id, "prediction": r.answer} for r in ROWS])
    b = write_lines(tmp_path / "b.jsonl", [{"id": r.id, "prediction": ""} for r in ROWS])
    out = tmp_path / "cmp"
    assert (
        run(
            [
                "compare",
                str(gold),
                str(a),
                str(b),
                "--trials",
                "50",
                "--seed",
                "1",
                "--no-embedding",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["systems"]) == {"a", "b"}
    assert {t["trials"] for t in printed["tests"]} == {50}
    assert "| a | b | em_f1 |" in (out / "compare.md").read_text()


def test_bad_input_exits_2_naming_the_line(tmp_path: Path) -> None:
    gold = write_split(tmp_path, ROWS)
    bad = write_lines(tmp_path / "p.jsonl", [{"id": "a1", "prediction": "x", "confidence": 2}])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tipqa.evaluate", str(gold), str(bad), "--no-embedding"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"error: {bad}, line 1, field 'confidence': 2 is outside [0, 1]" in done.stderr


@pytest.mark.slow
def test_default_detector_with_the_bundled_embedder(tmp_path: Path) -> None:
    gold = write_split(tmp_path, ROWS)
    predictions = write_lines(
        tmp_path / "p.jsonl",
        [
            {"id": "a1", "prediction": "Paris"},
            {"id": "a2", "prediction": "Honestly, I have no clue."},
            {"id": "u1", "prediction": "Sorry, that's beyond what I can answer."},
        ],
    )
    done = subprocess.run(
        [sys.executable, "-m", "tipqa.evaluate", str(gold), str(predictions), "--bootstrap", "10"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["counts"] == {"TP": 1, "FP_a": 0, "FP_u": 0, "FN": 1, "TN": 1}
    assert metrics["refusals_by_kind"]["embedding"] == 2
