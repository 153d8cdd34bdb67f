"""[audit]: the audit's sample and budget, whether its findings relabel, the verbatim count,
and the judge audit's sample."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, setting


@dataclass(frozen=True)
class AuditSettings(Settings):
    """[audit]: which questions the audit reads, how much it may judge, and what it changes.

    `sample` 0 turns the audit off; `apply` moves the questions it finds to answerable (stage
    `audit`) in the splits, the relevance files and the card; by default the labels stay
    those of Algorithm 1 and the audit only reports.
    """

    sample: float = setting(
        0.1,
        doc="share of each pool's unanswerable and of its discarded questions audited "
        "(0: no audit)",
    )
    seed: int = setting(0, doc="seed of the audit's sample")
    budget: int = setting(20, doc="judge prompts per audited question at most")
    apply: bool = setting(
        False, doc="move the questions the audit finds to answerable (stage `audit`)"
    )
    verbatim: bool = setting(
        True, doc="count the documents that contain each question verbatim (split columns)"
    )
    judge_sample: float = setting(
        0.1,
        doc="share of each pool's answerable, unanswerable and discarded questions the second "
        "judge of [audit.judge] re-judges (the judge audit; without [audit.judge]: none)",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_sample(self.sample, allow_zero=True)
        check_sample(self.judge_sample, allow_zero=True, name="judge_sample")
        if self.budget < 1:
            raise ConfigError(f"[audit] budget must be at least 1, got {self.budget}")

    @property
    def on(self) -> bool:
        """True when the audit runs (a share above 0)."""
        return self.sample > 0

    def audit_identity(self, judged: bool = False) -> dict[str, Any]:
        """What decides the audit's findings (not the verbatim count, nor `apply`, which only
        the splits read; `judge_sample` only when a second judge audits the judge)."""
        left_out = {"verbatim", "apply"} | (set() if judged else {"judge_sample"})
        return {key: value for key, value in self.identity().items() if key not in left_out}


def check_sample(share: float, *, allow_zero: bool = False, name: str = "sample") -> None:
    """A ConfigError unless `share` is in (0, 1] (or [0, 1] with `allow_zero`)."""
    low_ok = share >= 0 if allow_zero else share > 0
    if not (low_ok and share <= 1):
        interval = "[0, 1] (0: no audit)" if allow_zero else "(0, 1]"
        raise ConfigError(f"the audit's {name} = {share}: a share in {interval}")
