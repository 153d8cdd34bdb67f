"""Helpers for the annotation tests: fill in exported files the way people and tools do."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

Label = tuple[str, bool, str]  # relevant, problematic, comment


def fill_csv(exported: Path, completed: Path, labels: dict[str, Label]) -> None:
    """Fill the label columns of an exported CSV and save it as a spreadsheet would (BOM)."""
    rows = list(csv.reader(io.StringIO(exported.read_text("utf-8-sig"), newline="")))
    header = rows[0]
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows[1:]:
        relevant, problematic, comment = labels[row[header.index("item_id")]]
        row[header.index("relevant")] = relevant
        row[header.index("problematic")] = "x" if problematic else ""
        row[header.index("comment")] = comment
        writer.writerow(row)
    completed.parent.mkdir(parents=True, exist_ok=True)
    completed.write_bytes(("\ufeff" + out.getvalue()).encode("utf-8"))


def _result(name: str, kind: str, value: dict, n: int) -> dict:
    return {
        "id": f"r{n}-{name}",
        "from_name": name,
        "to_name": "document",
        "type": kind,
        "origin": "manual",
        "value": value,
    }


def label_studio_export(tasks_file: Path, completed: Path, labels: dict[str, Label]) -> None:
    """Write what Label Studio's "JSON" export gives for the imported tasks, annotated."""
    tasks = json.loads(tasks_file.read_text("utf-8"))
    exported = []
    for n, task in enumerate(tasks, start=1):
        relevant, problematic, comment = labels[task["data"]["item_id"]]
        result = [_result("relevant", "choices", {"choices": [relevant]}, n)]
        if problematic:
            result.append(
                _result("problematic", "choices", {"choices": ["problematic question"]}, n)
            )
        if comment:
            result.append(_result("comment", "textarea", {"text": [comment]}, n))
        exported.append(
            {
                "id": 100 + n,
                "data": task["data"],
                "annotations": [
                    {
                        "id": 500 + n,
                        "completed_by": 1,
                        "result": result,
                        "was_cancelled": False,
                        "ground_truth": False,
                        "created_at": "2025-01-01T10:00:00.000000Z",
                        "lead_time": 12.5,
                        "task": 100 + n,
                    }
                ],
                "predictions": [],
                "meta": {},
                "project": 7,
            }
        )
    completed.parent.mkdir(parents=True, exist_ok=True)
    completed.write_text(json.dumps(exported, ensure_ascii=False), "utf-8")
