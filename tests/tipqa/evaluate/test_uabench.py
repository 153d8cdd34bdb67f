"""UA-Bench's three-way predictions scored on a split: the confusion matrix in per cent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import labeled, write_lines, write_split

from tipqa.errors import InputError
from tipqa.evaluate.__main__ import run
from tipqa.evaluate.gold import load_gold
from tipqa.evaluate.uabench import score_uabench

ROWS = [
    labeled("a1", "answerable", "Paris"),
    labeled("a2", "answerable", "Nile"),
    labeled("a3", "answerable", "Rome"),
    labeled("a4", "answerable", "Lima"),
    labeled("u1", "unanswerable", "Oslo"),
    labeled("u2", "unanswerable", "Bern"),
    labeled("u3", "unanswerable", "Riga"),
    labeled("u4", "unanswerable", "Kiev"),
]
PREDICTED = {
    "a1": "ANSWERABLE", "a2": "ANSWERABLE", "a3": "ANSWERABLE", "a4": "MODEL_UNCERTAIN",
    "u1": "DATA_UNCERTAIN", "u2": "DATA_UNCERTAIN", "u3": "MODEL_UNCERTAIN", "u4": "ANSWERABLE",
}  # fmt: skip


def predictions(tmp_path: Path, table: dict[str, str]) -> Path:
    rows = [{"id": qid, "prediction": label} for qid, label in table.items()]
    return write_lines(tmp_path / "predictions.jsonl", rows)


def test_the_confusion_matrix_in_per_cent(tmp_path: Path) -> None:
    gold = load_gold(write_split(tmp_path, ROWS))
    result = score_uabench(gold, predictions(tmp_path, PREDICTED))
    assert result["counts"] == {
        "ANSWERABLE": {"ANSWERABLE": 3, "DATA_UNCERTAIN": 0, "MODEL_UNCERTAIN": 1},
        "ABSTAIN": {"ANSWERABLE": 1, "DATA_UNCERTAIN": 2, "MODEL_UNCERTAIN": 1},
    }
    assert result["percent_of_all"] == {
        "ANSWERABLE": {"ANSWERABLE": 37.5, "DATA_UNCERTAIN": 0.0, "MODEL_UNCERTAIN": 12.5},
        "ABSTAIN": {"ANSWERABLE": 12.5, "DATA_UNCERTAIN": 25.0, "MODEL_UNCERTAIN": 12.5},
    }
    assert result["percent_of_gold"]["ABSTAIN"] == {
        "ANSWERABLE": 25.0, "DATA_UNCERTAIN": 50.0, "MODEL_UNCERTAIN": 25.0,
    }  # fmt: skip
    # Three-way: a1-a3 and u1, u2 are right (5 of 8); abstention: u3 is right too (6 of 8).
    assert result["accuracy_three_way"] == 62.5
    assert result["accuracy_abstention"] == 75.0
    assert result["gold"] == {"ANSWERABLE": 4, "ABSTAIN": 4}


def test_missing_predictions_are_an_error_unless_allowed(tmp_path: Path) -> None:
    gold = load_gold(write_split(tmp_path, ROWS))
    partial = predictions(tmp_path, {"a1": "ANSWERABLE", "u1": "DATA_UNCERTAIN"})
    with pytest.raises(InputError, match="6 question"):
        score_uabench(gold, partial)
    result = score_uabench(gold, partial, allow_missing=True)
    assert result["questions"] == 2 and result["missing_left_out"] == 6
    assert result["accuracy_three_way"] == 100.0


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([{"id": "a1", "prediction": "ABSTAIN"}], "not one of ANSWERABLE"),
        ([{"id": "zz", "prediction": "ANSWERABLE"}], "not in split"),
        (['{"id": "a1"'], "not JSON"),
    ],
)
def test_bad_predictions_are_named(tmp_path: Path, rows: list, match: str) -> None:
    gold = load_gold(write_split(tmp_path, ROWS))
    with pytest.raises(InputError, match=match):
        score_uabench(gold, write_lines(tmp_path / "p.jsonl", rows), allow_missing=True)


def test_the_uabench_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_split(tmp_path, ROWS)
    assert run(["uabench", str(gold), str(predictions(tmp_path, PREDICTED))]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["percent_of_all"]["ABSTAIN"]["DATA_UNCERTAIN"] == 25.0
