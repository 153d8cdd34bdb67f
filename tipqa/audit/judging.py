"""The audit's judging: each question's candidates in turn, within its budget of prompts.

Judging runs in rounds across the audited questions, on the engine of the token stage
(`tipqa.stages.judging`): round r sends the next candidate of every question still open, all
in one batch to the judge. A question
stops at its first "yes" (its finding), when its budget of prompts is spent (a document's
windows beyond the budget are not sent), or when its candidates run out. A document is judged
by its windows (appendix A.2) around the keywords its relaxation searched with and an alias, a
chunk whole. The judge is asked what the build asked it (the question, its answer, the
text; the build's keywords for a rules judge), so the audit judges as the build judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tipqa.audit.relaxations import BuildView, Candidate
from tipqa.core.records import (
    AuditEvidence,
    AuditFinding,
    Document,
    JudgeRequest,
    Judgment,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.judging import JudgedItem, Judges, judge_in_rounds
from tipqa.stages.vector import chunk_offsets
from tipqa.stages.windows import WindowSettings, judge_windows

Span = tuple[int | None, int | None]
"""A unit's character offsets in its document (None where not known)."""


@dataclass
class AuditedQuestion:
    """One audited question: its candidates, where it is in them, and what it has spent."""

    view: BuildView
    candidates: list[Candidate]
    budget: int
    next: int = 0
    spent: int = 0
    failed: int = 0
    finding: AuditFinding | None = None
    units: dict[str, Candidate] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        """True while it has neither found evidence nor spent its budget nor run out."""
        return (
            self.finding is None and self.spent < self.budget and self.next < len(self.candidates)
        )

    def take(self) -> Candidate:
        """Its next candidate."""
        self.next += 1
        return self.candidates[self.next - 1]

    def requests(
        self,
        candidate: Candidate,
        document: Document,
        windows: WindowSettings,
        stats: StepStats,
    ) -> list[JudgeRequest]:
        """The prompts of one candidate, cut to what is left of the budget."""
        if candidate.chunk is not None:
            chunk = candidate.chunk
            span = chunk_offsets(document, chunk.text)
            return [self._request(candidate, chunk.chunk_id, chunk.text, span)]
        aliases = self.view.question.aliases
        found, _ = judge_windows(document, list(candidate.keywords), aliases, windows)
        left = self.budget - self.spent
        if len(found) > left:
            stats.add("windows_over_budget", len(found) - left)
        return [
            self._request(candidate, f"{w.doc_id}@w{w.index}", w.text, (w.start, w.end))
            for w in found[:left]
        ]

    def record(self, request: JudgeRequest, result: Judgment) -> None:
        """Keep the first "yes" (in request order) as the finding; count failures."""
        if result.failed:
            self.failed += 1
            return
        if result.verdict != "yes" or self.finding is not None:
            return
        candidate = self.units[request.unit_id]
        evidence = AuditEvidence(
            doc_id=request.doc_id,
            unit_id=request.unit_id,
            text=request.text,
            start=request.start,
            end=request.end,
            relaxation=candidate.relaxation,
        )
        question = self.view.question.id
        self.finding = AuditFinding(question, self.view.label, candidate.cause, evidence)

    def _request(self, candidate: Candidate, unit: str, text: str, span: Span) -> JudgeRequest:
        """One prompt of a candidate (its unit remembered, to name the cause of a "yes")."""
        question = self.view.question
        self.units[unit] = candidate
        return JudgeRequest.for_unit(
            question, self.view.keywords, "audit", candidate.doc_id, unit, text, span
        )


class AuditRound(JudgedItem):
    """An audited question as the judging engine sees it: its next candidate a round."""

    def __init__(self, audit: AuditedQuestion, windows: WindowSettings, stats: StepStats) -> None:
        self.audit = audit
        self.windows = windows
        self.stats = stats
        self.candidate: Candidate | None = None

    @property
    def open(self) -> bool:
        """While the audit is open."""
        return self.audit.open

    def take(self) -> str:
        """The next candidate's document."""
        self.candidate = self.audit.take()
        self.stats.add(f"candidates.{self.candidate.cause}")
        return self.candidate.doc_id

    def requests(self, document: Document | None) -> list[JudgeRequest]:
        """The candidate's prompts within the budget (spent as they are sent)."""
        assert self.candidate is not None and document is not None
        mine = self.audit.requests(self.candidate, document, self.windows, self.stats)
        self.audit.spent += len(mine)
        return mine

    def record(self, request: JudgeRequest, result: Judgment) -> None:
        """The audit keeps the verdict."""
        self.audit.record(request, result)


def judge_rounds(
    audits: list[AuditedQuestion],
    fetch: FetchDocuments,
    judge: RelevanceJudge | Judges,
    windows: WindowSettings,
    stats: StepStats,
) -> list[Judgment]:
    """Judge the audits' candidates in rounds until each is closed; every judgment made."""
    items = [AuditRound(audit, windows, stats) for audit in audits]
    judgments = judge_in_rounds(items, fetch, judge, stats, desc="audit judging rounds")
    stats.add(
        "questions_over_budget", sum(a.finding is None and a.spent >= a.budget for a in audits)
    )
    return judgments
