"""A pool's label audit (`<run>/pools/<pool>/audit.json`, where the build made one), as the
explorer shows it: which questions were audited, which the audit found answerable, and why;
with a judge audit (`judge_audit`, a second judge re-judging a sample of every label), which
questions the second judge disputes, on which unit, and its figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.layout import PoolLayout
from tipqa.dataset.splits import read_audit

FIGURES = ("audited", "rate", "ci95", "judge_calls", "prompt_tokens", "build", "applied")
"""The pool-wide figures of an audit the build view shows (with its settings and labels)."""
JUDGE_AUDITED = ("answerable", "unanswerable", "discarded")
"""The labels a judge audit samples, each with its disputed questions."""
DISPUTING = {"answerable": "no", "unanswerable": "yes", "discarded": "yes"}
"""The second judge's answer that disputes each label (the build's judge said the other)."""


@dataclass
class PoolAudit:
    """One pool's audit: the audited ids, the findings by id, the figures."""

    audited: set[str] = field(default_factory=set)
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    disputed: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The questions the second judge disputes, by id: `label`, `stage`, `evidence` (the unit
    it judged otherwise than the build's judge), `second` (its answer), `judge` (its model)."""


def pool_audit(pool: PoolLayout) -> PoolAudit | None:
    """The pool's audit, or None where the build made none."""
    if not pool.audit.is_file():
        return None
    data = read_audit(pool)
    try:
        audited = {i for ids in data["audited_ids"].values() for i in ids}
        found = {f["id"]: f for f in data["found"]}
        figures = {key: data[key] for key in FIGURES if key in data}
        figures["settings"] = data.get("settings", {})
        figures["fingerprint"] = data.get("fingerprint")
        figures["by_label"] = data["by_label"]
        disputed = _judge_audit(data.get("judge_audit"), figures)
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"a label audit without the field {exc}", path=str(pool.audit)) from exc
    return PoolAudit(audited, found, figures, disputed)


def _judge_audit(judged: dict[str, Any] | None, figures: dict[str, Any]) -> dict[str, Any]:
    """The disputed questions of a judge audit; its figures (counts, not lists) into
    `figures["judge_audit"]`. Nothing where the audit has no judge audit."""
    if not judged:
        return {}
    model = judged["judge"].get("model") if isinstance(judged["judge"], dict) else None
    disputed: dict[str, Any] = {}
    labels = {}
    for label in JUDGE_AUDITED:
        block = judged[label]
        for entry in block["disputed"]:
            disputed[entry["id"]] = {
                "label": label,
                "stage": entry["stage"],
                "evidence": entry.get("evidence"),
                "second": DISPUTING[label],
                "judge": model,
            }
        labels[label] = {**block, "disputed": len(block["disputed"])}
    figures["judge_audit"] = {
        "judge": judged["judge"],
        "by_label": labels,
        "agreement": judged.get("agreement"),
        "judge_calls": judged.get("judge_calls"),
        "prompt_tokens": judged.get("prompt_tokens"),
    }
    return disputed
