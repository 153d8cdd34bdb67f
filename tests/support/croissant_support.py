"""What a build records of how far its labels hold, authored: a pool's `audit.json` (with and
without the judge audit of a second judge) and the annotation agreement report; and the
records of a `croissant.json` as `mlcroissant` reads them."""

from __future__ import annotations

import math
from typing import Any

from tipqa.audit.figures import clopper_pearson, label_figures
from tipqa.core.records import AuditEvidence, AuditFinding
from tipqa.dataset.splits import AUDIT_SCHEMA_VERSION

AUDIT_FINGERPRINT = "audit-of-dev"
SECOND_JUDGE = {
    "backend": "openai",
    "model": "second-judge-70b",
    "prompt": "judge-v1",
    "prompt_sha256": "0f" * 32,
}
AGREEMENT: dict[str, Any] = {
    "items": 700,
    "llm_human": {
        "pairs": 900,
        "agreement": {"value": 82.8, "ci95": [80.1, 85.2]},
        "kappa": {"value": 0.61, "ci95": [0.55, 0.67]},
    },
}


def judge_audit_label(labelled: int, audited: int, disputed: int) -> dict[str, Any]:
    """One label of a judge audit: `disputed` of `audited` questions, with the exact interval."""
    return {
        "labelled": labelled,
        "audited": audited,
        "disputed": [
            {"id": f"q{i}", "stage": "token", "evidence": {"doc_id": f"d{i}"}}
            for i in range(disputed)
        ],
        "rate": disputed / audited,
        "ci95": clopper_pearson(disputed, audited),
        "by_stage": {
            "token": {"audited": audited, "disputed": disputed, "rate": disputed / audited}
        },
        "failed": 0,
    }


def judge_audit() -> dict[str, Any]:
    """A judge audit in the shape `audit.json`'s `judge_audit` has."""
    return {
        "judge": SECOND_JUDGE,
        "answerable": judge_audit_label(90, 10, 2),
        "unanswerable": judge_audit_label(40, 4, 1),
        "discarded": judge_audit_label(3, 1, 0),
        "agreement": {"units": 57, "observed": 0.9123, "kappa": 0.7345, "ci95": [0.52, 0.88]},
        "judge_calls": 48,
        "prompt_tokens": 12_345,
    }


def audit_file(found: int = 2, judged: bool = False) -> dict[str, Any]:
    """A pool's `audit.json`: 40 unanswerable questions (10 audited, `found` with evidence) and
    3 discarded (1 audited); with `judged`, a judge audit beside it."""
    evidence = AuditEvidence("d", "d@w0", "t", 0, 1, "r")
    findings = [AuditFinding(f"q{i}", "unanswerable", "alias_only", evidence) for i in range(found)]
    by_label = {
        "unanswerable": label_figures(40, 10, findings),
        "discarded": label_figures(3, 1, []),
    }
    audit: dict[str, Any] = {
        "schema_version": AUDIT_SCHEMA_VERSION,
        "pool": "dev",
        "fingerprint": AUDIT_FINGERPRINT,
        "settings": {"audit": {"sample": 0.25, "seed": 0, "budget": 20}},
        "audited": 11,
        "by_label": by_label,
        "rate": by_label["unanswerable"]["rate"],
        "ci95": by_label["unanswerable"]["ci95"],
        "found": [f.to_dict() for f in findings],
        "judge_calls": 200,
        "prompt_tokens": 0,
        "build": {"judge_calls": 1000, "prompt_tokens": 0},
    }
    if judged:
        audit["settings"]["audit"]["judge_sample"] = 0.1
        audit["judge_audit"] = judge_audit()
    return audit


def plain(value: Any) -> Any:
    """A value `mlcroissant` read, as the splits' JSON has it: text decoded, a missing float
    (NaN, as pandas reads a null) None."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def records(dataset: Any, record_set: str) -> list[dict[str, Any]]:
    """A record set's records as `mlcroissant` reads them, with plain values, keyed by the
    fields' names."""
    prefix = f"{record_set}/"
    return [
        {key.removeprefix(prefix): plain(value) for key, value in row.items()}
        for row in dataset.records(record_set)
    ]
