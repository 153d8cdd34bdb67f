"""The audit's judging: each question's candidates in turn, within its budget of prompts.

Judging runs in rounds across the audited questions, as the token stage does: round r sends
the next candidate of every question still open, all in one batch to the judge. A question
stops at its first "yes" (its finding), when its budget of prompts is spent (a document's
windows beyond the budget are not sent), or when its candidates run out. A document is judged
by its windows (appendix A.2) around the keywords its relaxation searched with and an alias, a
chunk whole. The judge is asked what the build asked it (the question, its answer, the
text; the build's keywords for a rules judge), so the audit judges as the build judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tqdm import tqdm

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
from tipqa.stages.vector import chunk_offsets
from tipqa.stages.windows import WindowSettings, judge_windows

Span = tuple[int | None, int | None]
"""A unit's character offsets in its document (None where not known)."""


@dataclass
class Audit:
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
        document: Document | None,
        windows: WindowSettings,
        stats: StepStats,
    ) -> list[JudgeRequest]:
        """The prompts of one candidate, cut to what is left of the budget."""
        if document is None:
            stats.error("missing_document")
            return []
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

    def record(self, request: JudgeRequest, result: Judgment, stats: StepStats) -> None:
        """Keep the first "yes" (in request order) as the finding; count failures."""
        if result.failed:
            self.failed += 1
            stats.error(f"judgment_{(result.error or 'failed').split(':')[0]}")
            return
        if result.label != "yes" or self.finding is not None:
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
        return JudgeRequest(
            question_id=question.id,
            question=question.text,
            answer=question.answer,
            aliases=question.aliases,
            keywords=self.view.keywords,
            stage="audit",
            doc_id=candidate.doc_id,
            unit_id=unit,
            text=text,
            start=span[0],
            end=span[1],
        )


def judge_rounds(
    audits: list[Audit],
    fetch: FetchDocuments,
    judge: RelevanceJudge,
    windows: WindowSettings,
    stats: StepStats,
) -> list[Judgment]:
    """Judge the audits' candidates in rounds until each is closed; every judgment made."""
    judgments: list[Judgment] = []
    rounds = tqdm(desc="audit judging rounds", leave=False)
    while opened := [audit for audit in audits if audit.open]:
        taken = [(audit, audit.take()) for audit in opened]
        documents = fetch(sorted({candidate.doc_id for _, candidate in taken}))
        requests: list[JudgeRequest] = []
        owners: list[Audit] = []
        for audit, candidate in taken:
            stats.add(f"candidates.{candidate.cause}")
            mine = audit.requests(candidate, documents.get(candidate.doc_id), windows, stats)
            audit.spent += len(mine)
            requests += mine
            owners += [audit] * len(mine)
        stats.add("prompts", len(requests))
        results = judge.judge(requests) if requests else []
        judgments += results
        for audit, request, result in zip(owners, requests, results, strict=True):
            audit.record(request, result, stats)
        rounds.update()
    rounds.close()
    stats.add(
        "questions_over_budget", sum(a.finding is None and a.spent >= a.budget for a in audits)
    )
    return judgments
