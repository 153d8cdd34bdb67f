"""Reading predictions files: each kind of bad file gives an error naming file, line and field."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from support.evaluate_support import write_lines

from tipqa.core.errors import InputError
from tipqa.evaluate.predictions import (
    Prediction,
    PredictionSet,
    read_predictions,
    write_predictions,
)

GOLD_IDS = ["q1", "q2", "q3"]
GOOD = [{"id": "q1", "prediction": "Paris"}, {"id": "q2", "prediction": "Nile"}]


def read(tmp_path: Path, rows: list, **options) -> PredictionSet:
    path = write_lines(tmp_path / "predictions.jsonl", rows)
    return read_predictions(path, GOLD_IDS, **options)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"id": "q3", "prediction": ', r"line 3: invalid JSON"),
        ('["q3", "Paris"]', r"line 3: expected a JSON object, got list"),
        ({"prediction": "Paris"}, r"line 3, field 'id': missing field"),
        ({"id": "q3"}, r"line 3, field 'prediction': missing field"),
        ({"id": 3, "prediction": "x"}, r"line 3, field 'id': must be a non-empty string"),
        ({"id": "q3", "prediction": None}, r"line 3, field 'prediction': must be a string"),
        ({"id": "q3", "prediction": "x", "confidense": 0.5}, r"field 'confidense': unknown key"),
        (
            {"id": "q3", "prediction": "x", "confidence": 1.5},
            r"'confidence': 1.5 is outside \[0, 1\]",
        ),
        ({"id": "q3", "prediction": "x", "confidence": -0.1}, r"-0.1 is outside \[0, 1\]"),
        (
            '{"id": "q3", "prediction": "x", "confidence": NaN}',
            r"line 3, field 'confidence': is NaN",
        ),
        ({"id": "q3", "prediction": "x", "confidence": "high"}, r"must be a number in \[0, 1\]"),
        ({"id": "q3", "prediction": "x", "confidence": True}, r"must be a number in \[0, 1\]"),
        ({"id": "q3", "prediction": "x", "refused": "yes"}, r"'refused': must be true or false"),
        (
            {"id": "q1", "prediction": "x"},
            r"line 3, field 'id': duplicate id 'q1' \(first on line 1\)",
        ),
        ({"id": "q9", "prediction": "x"}, r"line 3, field 'id': unknown id 'q9'"),
    ],
)
def test_bad_lines(tmp_path: Path, bad: object, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        read(tmp_path, [*GOOD, bad])
    assert str(tmp_path / "predictions.jsonl") in str(caught.value)


def test_missing_ids(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"1 of 3 gold questions have no prediction \('q3'\); pass --allow-missing"
    ):
        read(tmp_path, GOOD)
    allowed = read(tmp_path, GOOD, allow_missing=True)
    assert allowed.missing == ["q3"]
    assert sorted(allowed.by_id) == ["q1", "q2"]


def test_an_empty_file_misses_everything(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"3 of 3 gold questions have no prediction"):
        read(tmp_path, [])
    assert read(tmp_path, ["", "  "], allow_missing=True).missing == GOLD_IDS


def test_no_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such predictions file"):
        read_predictions(tmp_path / "absent.jsonl", GOLD_IDS)


def test_optional_fields_and_round_trip(tmp_path: Path) -> None:
    rows = [
        {"id": "q1", "prediction": "Paris", "confidence": 1, "meta": {"model": "m"}},
        {"id": "q2", "prediction": "", "refused": True},
        {"id": "q3", "prediction": "Nile", "confidence": 0.25, "refused": False},
    ]
    first = read(tmp_path, rows)
    assert first.by_id["q1"].confidence == 1.0 and isinstance(first.by_id["q1"].confidence, float)
    assert first.by_id["q2"].refused is True and first.by_id["q2"].confidence is None
    path = tmp_path / "again.jsonl"
    assert write_predictions(path, first.by_id.values()) == 3
    assert read_predictions(path, GOLD_IDS).by_id == first.by_id
    assert Prediction("q", "x").to_dict() == {"id": "q", "prediction": "x"}
    assert not math.isnan(first.by_id["q3"].confidence or 0.0)
