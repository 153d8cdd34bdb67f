"""A model's predictions: one JSON object per line, read strictly and checked against the gold.

Each line holds `{"id": ..., "prediction": "<the model's text>"}` and optionally `"confidence"`
(a probability in [0, 1] that the answer is correct) and `"refused"` (true for a system that
abstains explicitly), plus an optional `"meta"` object that the scorer ignores. Anything else is
an error naming the file, the line and the field: invalid JSON, a missing or mistyped field, an
unknown key (a misspelt `confidence` must not vanish), a confidence outside [0, 1] or NaN, an id
given twice, an id the gold does not have. Gold questions without a prediction are an error too,
unless `allow_missing`: they are then scored as refusals and counted.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open, iter_json_lines

FIELDS = ("id", "prediction", "confidence", "refused", "meta")
SHOWN_IDS = 5


@dataclass
class Prediction:
    """One question's prediction: the model's text, and optionally confidence and abstention."""

    id: str
    prediction: str
    confidence: float | None = None
    refused: bool | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSONL form (optional fields only when set)."""
        out: dict[str, Any] = {"id": self.id, "prediction": self.prediction}
        if self.confidence is not None:
            out["confidence"] = self.confidence
        if self.refused is not None:
            out["refused"] = self.refused
        if self.meta:
            out["meta"] = self.meta
        return out


@dataclass
class PredictionSet:
    """The predictions of one file by question id, and the gold ids that had none."""

    path: str
    by_id: dict[str, Prediction]
    missing: list[str]


def parse_prediction(data: Any, path: str, line: int) -> Prediction:
    """One line's object as a Prediction, or an InputError naming the line and the field."""
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}", path=path, line=line)
    for key in data:
        if key not in FIELDS:
            raise InputError(
                f"unknown key {key!r} (known: {', '.join(FIELDS)})", path=path, line=line, field=key
            )
    for key in ("id", "prediction"):
        if key not in data:
            raise InputError("missing field", path=path, line=line, field=key)
    qid, text = data["id"], data["prediction"]
    if not isinstance(qid, str) or not qid:
        raise InputError(
            f"must be a non-empty string, got {qid!r}", path=path, line=line, field="id"
        )
    if not isinstance(text, str):
        raise InputError(
            f'must be a string (an abstention is "" or "refused": true), got {text!r}',
            path=path,
            line=line,
            field="prediction",
        )
    confidence = data.get("confidence")
    if confidence is not None:
        confidence = _confidence(confidence, path, line)
    refused = data.get("refused")
    if refused is not None and not isinstance(refused, bool):
        raise InputError(
            f"must be true or false, got {refused!r}", path=path, line=line, field="refused"
        )
    meta = data.get("meta") or {}
    if not isinstance(meta, dict):
        raise InputError("must be an object", path=path, line=line, field="meta")
    return Prediction(qid, text, confidence, refused, meta)


def _confidence(value: Any, path: str, line: int) -> float:
    """A confidence as a float in [0, 1], or an InputError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(
            f"must be a number in [0, 1], got {value!r}", path=path, line=line, field="confidence"
        )
    if math.isnan(value):
        raise InputError("is NaN", path=path, line=line, field="confidence")
    if not 0.0 <= value <= 1.0:
        raise InputError(f"{value!r} is outside [0, 1]", path=path, line=line, field="confidence")
    return float(value)


def iter_prediction_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, Prediction]]:
    """(line number, prediction) of every non-blank line; a bad line raises InputError."""
    for number, data in iter_json_lines(path):
        yield number, parse_prediction(data, str(path), number)


def read_predictions(
    path: str | os.PathLike[str], gold_ids: Collection[str], *, allow_missing: bool = False
) -> PredictionSet:
    """Read and check a predictions file against the gold question ids (see the module doc)."""
    name = str(path)
    if not Path(path).is_file():
        raise InputError("no such predictions file", path=name)
    known = set(gold_ids)
    by_id: dict[str, Prediction] = {}
    first_line: dict[str, int] = {}
    for number, prediction in iter_prediction_lines(path):
        qid = prediction.id
        if qid in first_line:
            raise InputError(
                f"duplicate id {qid!r} (first on line {first_line[qid]})",
                path=name,
                line=number,
                field="id",
            )
        if qid not in known:
            raise InputError(
                f"unknown id {qid!r}: no such question in the gold split",
                path=name,
                line=number,
                field="id",
            )
        first_line[qid] = number
        by_id[qid] = prediction
    missing = [qid for qid in gold_ids if qid not in by_id]
    if missing and not allow_missing:
        shown = ", ".join(repr(qid) for qid in missing[:SHOWN_IDS])
        more = f" and {len(missing) - SHOWN_IDS} more" if len(missing) > SHOWN_IDS else ""
        raise InputError(
            f"{len(missing)} of {len(known)} gold questions have no prediction ({shown}{more}); "
            "pass --allow-missing to score them as refusals",
            path=name,
        )
    return PredictionSet(name, by_id, missing)


def write_predictions(path: str | os.PathLike[str], predictions: Iterable[Prediction]) -> int:
    """Write predictions as JSONL atomically; return how many."""
    count = 0
    with atomic_open(path) as out:
        for prediction in predictions:
            out.write(orjson.dumps(prediction.to_dict()) + b"\n")
            count += 1
    return count
