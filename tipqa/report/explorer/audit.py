"""A pool's label audit (`<run>/pools/<pool>/audit.json`, where the build made one), as the
explorer shows it: which questions were audited, which the audit found answerable, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.layout import PoolLayout
from tipqa.dataset.splits import read_audit

FIGURES = ("audited", "rate", "ci95", "judge_calls", "prompt_tokens", "build", "applied")
"""The pool-wide figures of an audit the build view shows (with its settings and labels)."""


@dataclass
class Audit:
    """One pool's audit: the audited ids, the findings by id, the figures."""

    audited: set[str] = field(default_factory=set)
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)


def pool_audit(pool: PoolLayout) -> Audit | None:
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
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"a label audit without the field {exc}", path=str(pool.audit)) from exc
    return Audit(audited, found, figures)
