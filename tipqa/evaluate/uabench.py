"""Predictions in UA-Bench's three-way format, scored against a split as a confusion matrix.

Gold is two-way: an answerable question is ANSWERABLE, an unanswerable one (the corpus holds
no evidence for it) is ABSTAIN. A prediction is one of ANSWERABLE, DATA_UNCERTAIN (the
knowledge is missing from what the model learned from) and MODEL_UNCERTAIN (the model is
unsure of knowledge it may have). Both uncertain labels are abstentions; of them, only
DATA_UNCERTAIN gives the reason a TIP split knows to be true of an unanswerable question, so
the three-way accuracy counts ABSTAIN → DATA_UNCERTAIN as right and ABSTAIN →
MODEL_UNCERTAIN as wrong, while the abstention accuracy counts both as right. The matrix is
in per cent, of all scored questions and of each gold row.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from tipqa.errors import InputError
from tipqa.evaluate.gold import GoldSet

GOLD_LABELS: tuple[str, ...] = ("ANSWERABLE", "ABSTAIN")
PREDICTED_LABELS: tuple[str, ...] = ("ANSWERABLE", "DATA_UNCERTAIN", "MODEL_UNCERTAIN")


def gold_label(label: str) -> str:
    """The UA-Bench gold label of a TIP label (answerable or unanswerable)."""
    if label == "answerable":
        return "ANSWERABLE"
    if label == "unanswerable":
        return "ABSTAIN"
    raise InputError(f"label {label!r} has no UA-Bench gold label", field="label")


def read_predictions(path: Path) -> dict[str, str]:
    """`{id, prediction}` lines, prediction one of PREDICTED_LABELS; bad lines: InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no predictions file here", path=str(path))
    found: dict[str, str] = {}
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc}", path=str(path), line=number) from None
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                raise InputError("expected an object with a string id", path=str(path), line=number)
            label = row.get("prediction")
            if label not in PREDICTED_LABELS:
                raise InputError(
                    f"prediction {label!r} is not one of {', '.join(PREDICTED_LABELS)}",
                    path=str(path),
                    line=number,
                    field="prediction",
                )
            if row["id"] in found:
                raise InputError(
                    f"question {row['id']!r} predicted twice", path=str(path), line=number
                )
            found[row["id"]] = label
    return found


def _percent(part: int, whole: int) -> float | None:
    """`part` of `whole` in per cent, rounded to 2 places (None of nothing)."""
    return round(100.0 * part / whole, 2) if whole else None


def confusion(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Counts and per cent of (gold, predicted) pairs, with the two accuracies."""
    counts = {g: dict.fromkeys(PREDICTED_LABELS, 0) for g in GOLD_LABELS}
    for gold, predicted in pairs:
        counts[gold][predicted] += 1
    total = sum(sum(row.values()) for row in counts.values())
    rows = {g: sum(counts[g].values()) for g in GOLD_LABELS}
    answered, abstain = counts["ANSWERABLE"], counts["ABSTAIN"]
    abstained = abstain["DATA_UNCERTAIN"] + abstain["MODEL_UNCERTAIN"]
    return {
        "questions": total,
        "gold": rows,
        "counts": counts,
        "percent_of_all": {
            g: {p: _percent(n, total) for p, n in counts[g].items()} for g in GOLD_LABELS
        },
        "percent_of_gold": {
            g: {p: _percent(n, rows[g]) for p, n in counts[g].items()} for g in GOLD_LABELS
        },
        "accuracy_three_way": _percent(answered["ANSWERABLE"] + abstain["DATA_UNCERTAIN"], total),
        "accuracy_abstention": _percent(answered["ANSWERABLE"] + abstained, total),
    }


def score_uabench(gold: GoldSet, path: Path, *, allow_missing: bool = False) -> dict[str, Any]:
    """The confusion matrix of the predictions in `path` on `gold`.

    Every gold question needs a prediction (with `allow_missing`, those without one are left
    out and counted); a prediction for a question not in the split is an InputError.
    """
    predicted = read_predictions(path)
    ids = set(gold.ids)
    stray = sorted(set(predicted) - ids)
    if stray:
        raise InputError(
            f"{len(stray)} prediction(s) for questions not in split {gold.split!r}, "
            f"e.g. {stray[0]!r}",
            path=str(path),
        )
    missing = [q.id for q in gold.questions if q.id not in predicted]
    if missing and not allow_missing:
        raise InputError(
            f"{len(missing)} question(s) of split {gold.split!r} have no prediction, "
            f"e.g. {missing[0]!r} (--allow-missing leaves them out)",
            path=str(path),
        )
    pairs = [(gold_label(q.label), predicted[q.id]) for q in gold.questions if q.id in predicted]
    result = confusion(pairs)
    result.update(split=gold.split, gold_source=gold.source, missing_left_out=len(missing))
    return result
