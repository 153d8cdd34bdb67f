"""Token stage of Algorithm 1: keyword search, then judging the first k1 hits.

Judging runs in rounds across all unresolved questions of a shard: round r sends the r-th
ranked candidate of every question still open, and a question leaves at its first "yes".
The labels equal those of judging every candidate (a "yes" anywhere makes a question
answerable; otherwise only the failures and the total count matter), with far fewer calls.
`judge_all` turns the early exit off when every relevant document is wanted. The rounds are
those of the one judging engine (`tipqa.stages.judging`); with a confirming judge, a "yes" is
evidence only where it says yes too, and otherwise judging goes on with the next candidate.
"""

from __future__ import annotations

from tqdm import tqdm

from tipqa.core.records import (
    Decision,
    Document,
    Evidence,
    JudgeRequest,
    Judgment,
    Keywords,
    Outcome,
    Question,
    TokenCandidates,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments, TokenIndex
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.judging import JudgedItem, Judges, judge_in_rounds
from tipqa.stages.windows import WindowSettings, judge_windows


def search_tokens(
    questions: list[Question],
    keywords: dict[str, Keywords],
    index: TokenIndex,
    k1: int,
    stats: StepStats,
) -> list[TokenCandidates]:
    """Run the token query of every question; keep the first k1 hits and the total."""
    out = []
    for question in tqdm(questions, desc="token search", unit="q", leave=False):
        kws = keywords[question.id].keywords
        result = index.search(kws, question.aliases, k1)
        stats.add("questions")
        stats.add("hits_returned", len(result.hits))
        stats.add("over_k1" if result.total > k1 else "within_k1")
        if result.total == 0:
            stats.add("no_match")
        out.append(TokenCandidates(question.id, kws, result.total, result.hits))
    return out


class TokenQuestion(JudgedItem):
    """One question of the token stage: its first k1 candidates, judged in rank order until
    the first "yes" (every one of them with `judge_all`)."""

    def __init__(
        self,
        question: Question,
        candidates: TokenCandidates,
        k1: int,
        windows: WindowSettings,
        stats: StepStats,
        judge_all: bool,
    ) -> None:
        self.question = question
        self.candidates = candidates
        self.k1 = k1
        self.depth = min(k1, len(candidates.hits))
        self.windows = windows
        self.stats = stats
        self.judge_all = judge_all
        self.judged = 0
        self.evidence: Evidence | None = None
        self.failures: list[str] = []
        self.round: dict[str, list[Judgment]] = {}

    @property
    def open(self) -> bool:
        """True while a candidate is left and no evidence is found (or `judge_all`)."""
        return (self.judge_all or self.evidence is None) and self.judged < self.depth

    def take(self) -> str:
        """The next ranked candidate's document."""
        if self.judge_all:
            self.stats.add("documents_judged_after_a_yes", int(self.evidence is not None))
        self.stats.add("documents_judged")
        self.judged += 1
        return self.candidates.hits[self.judged - 1].doc_id

    def requests(self, document: Document | None) -> list[JudgeRequest]:
        """The document's windows around the keywords and an alias (appendix A.2)."""
        assert document is not None
        keywords = self.candidates.keywords
        found, truncated = judge_windows(document, keywords, self.question.aliases, self.windows)
        self.stats.add("windows_truncated", int(truncated))
        return [
            JudgeRequest.for_unit(
                self.question,
                keywords,
                "token",
                document.id,
                f"{document.id}@w{w.index}",
                w.text,
                (w.start, w.end),
            )
            for w in found
        ]

    def missing(self, doc_id: str) -> list[Judgment]:
        """A failed judgment of the missing document (the question cannot be decided)."""
        self.failures.append(f"{doc_id}: missing_document")
        question = self.question.id
        return [Judgment(question, "token", doc_id, doc_id, None, "", "index", "missing_document")]

    def record(self, request: JudgeRequest, result: Judgment) -> None:
        """The first "yes" in rank order is the evidence."""
        self.round.setdefault(request.doc_id, []).append(result)
        if result.verdict == "yes" and self.evidence is None:
            self.evidence = evidence_of(request, result)

    def end_round(self) -> None:
        """A document judged with a failure, before any evidence, is a failure."""
        for doc_id, results in self.round.items():
            if self.evidence is None and any(r.failed for r in results):
                errors = sorted({r.failure for r in results if r.failed})
                self.failures.append(f"{doc_id}: {'; '.join(errors)}")
        self.round = {}

    def decide(self) -> Decision:
        """Algorithm 1's token-stage rule (`_decide`)."""
        return _decide(
            self.question, self.candidates, self.evidence, self.failures, self.judged, self.k1
        )


def evidence_of(request: JudgeRequest, result: Judgment) -> Evidence:
    """The evidence a unit judged relevant gives, with its confirmation where there is one."""
    return Evidence(
        request.stage, request.doc_id, request.unit_id, request.text, result.confirmation
    )


def judge_token_candidates(
    questions: list[Question],
    candidates: dict[str, TokenCandidates],
    fetch: FetchDocuments,
    judges: RelevanceJudge | Judges,
    k1: int,
    windows: WindowSettings,
    stats: StepStats,
    *,
    judge_all: bool = False,
) -> tuple[list[Decision], list[Judgment]]:
    """Judge candidates in rank order with early exit; return decisions and every judgment.

    With `judge_all`, a question is not left at its first "yes": all of its first k1
    candidates are judged (to know every relevant document, e.g. for the first training step
    that saw one). Labels and evidence stay those of early exit: the evidence is the first
    "yes" in rank order.
    """
    items = [TokenQuestion(q, candidates[q.id], k1, windows, stats, judge_all) for q in questions]
    depth = max((item.depth for item in items), default=0)
    judgments = judge_in_rounds(
        items, fetch, judges, stats, desc="token judging rounds", rounds=depth
    )
    decisions = [item.decide() for item in items]
    for decision in decisions:
        stats.add(f"outcome_{decision.label}")
    judged = sum(item.judged for item in items)
    stats.add("documents_skipped_by_early_exit", sum(item.depth for item in items) - judged)
    return decisions, judgments


def _decide(
    question: Question,
    candidates: TokenCandidates,
    evidence: Evidence | None,
    failures: list[str],
    judged: int,
    k1: int,
) -> Decision:
    """Algorithm 1's token-stage rule, with failed judgments kept apart from "no"."""
    total = candidates.total
    label: Outcome
    if evidence is not None:
        label, reason = "answerable", "a token-search document was judged relevant"
    elif failures:
        label = "undetermined"
        reason = f"{len(failures)} judgment(s) failed: " + " | ".join(failures[:5])
    elif total > k1:
        label, reason = "discarded", f"all {k1} judged documents irrelevant, {total} matched"
    elif total == 0:
        label, reason = "to_vector", "no document contains the keywords and an alias"
    else:
        label, reason = "to_vector", f"all {total} matching documents judged irrelevant"
    return Decision(question.id, label, "token", reason, evidence, total, judged)
