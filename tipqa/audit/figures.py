"""The audit's figures: per label, the share of audited questions with evidence, and its
exact (Clopper-Pearson) 95% interval.

The sample is a simple random sample of the label's questions, so found / audited estimates
the share of the label that the relaxations and the judge would find answerable; the interval
is the exact binomial one (conservative for a sample without replacement).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tipqa.audit.relaxations import CAUSES
from tipqa.core.records import AuditFinding

CONFIDENCE = 0.95


def clopper_pearson(found: int, trials: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """The exact binomial interval [lo, hi] of a share of `found` in `trials` (None: no trials)."""
    from scipy.stats import beta

    if trials == 0:
        return None
    if not 0 <= found <= trials:
        raise ValueError(f"found = {found} is not between 0 and trials = {trials}")
    tail = (1 - confidence) / 2
    low = 0.0 if found == 0 else float(beta.ppf(tail, found, trials - found + 1))
    high = 1.0 if found == trials else float(beta.ppf(1 - tail, found + 1, trials - found))
    return [low, high]


def label_figures(
    labelled: int, audited: int, findings: list[AuditFinding], failed: int = 0
) -> dict[str, Any]:
    """One label's counts, share found, its interval and the findings by cause.

    `failed` audited questions (a judgment failed, no evidence found) are undetermined: left
    out of the share's denominator, never counted as a "no".
    """
    causes = Counter(finding.cause for finding in findings)
    determined = audited - failed
    return {
        "labelled": labelled,
        "audited": audited,
        "found": len(findings),
        "failed": failed,
        "rate": len(findings) / determined if determined else None,
        "ci95": clopper_pearson(len(findings), determined),
        "by_cause": {cause: causes.get(cause, 0) for cause in CAUSES},
    }
