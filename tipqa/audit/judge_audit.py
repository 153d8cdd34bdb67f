"""The judge audit: a second judge (`[audit.judge]`) re-judges a seeded sample of what the
build's judge decided, and measures both of its errors (see docs/trust.md).

- **answerable**: the second judge re-judges the accepted evidence (the window or chunk, with
  the same prompt); a "no" disputes the label;
- **unanswerable** and **discarded**: it re-judges the units the build judged, in the build's
  order (the token stage's windows, then the vector stage's chunks), until its first "yes" or
  `budget` prompts; a "yes" disputes the label, the unit it accepted going with the dispute.

Each label's sample is `judge_sample` of its questions (rounded up), seeded by `[audit] seed`
apart from the search audit's. A failed judgment of the second judge is never a "no": a question
with one and no dispute is undetermined, counted (`failed`) and left out of the rate. Rates carry
exact Clopper-Pearson intervals; Cohen's kappa of the two judges is over every unit both judged
(a failed judgment aside), with a bootstrap interval over those units. The second judge answers
through the run's LLM cache, keyed by its own model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tipqa.audit.figures import clopper_pearson
from tipqa.core.agreement import bootstrap, kappa
from tipqa.core.jsonl import iter_records
from tipqa.core.layout import ShardLayout
from tipqa.core.records import (
    Document,
    JudgeRequest,
    Judgment,
    LabeledQuestion,
    Question,
    Stage,
    VectorCandidates,
)
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.llm.judges.base import RelevanceJudge
from tipqa.stages.judging import JudgedItem, judge_in_rounds
from tipqa.stages.windows import WindowSettings, judge_windows

JUDGE_AUDITED = ("answerable", "unanswerable", "discarded")
"""The labels the judge audit samples, each apart."""
DISPUTING = {"answerable": "no", "unanswerable": "yes", "discarded": "yes"}
"""The second judge's answer that disputes each label."""
PREFIX = "judge_audit."
"""The prefix of the judge audit's counters and errors in the audit's stats."""
SECOND_FAILED = f"{PREFIX}judgment_"
"""The prefix of the second judge's failures in the audit's stats (`judge_audit.judgment_...`)."""
RESAMPLES = 1000
"""Bootstrap resamples of the agreement's kappa."""

Pair = tuple[str, str]
"""The build judge's and the second judge's label on one unit."""


@dataclass
class Unit:
    """One unit to re-judge: the build's request and its judge's label (None: it failed)."""

    request: JudgeRequest
    first: str | None


@dataclass
class Rejudged(JudgedItem):
    """One sampled question: its units in the build's order, and what the second judge said
    (judged by the one engine, `tipqa.stages.judging`)."""

    row: LabeledQuestion
    units: list[Unit]
    budget: int
    next: int = 0
    failed: int = 0
    disputed: Unit | None = None
    pairs: list[Pair] = field(default_factory=list)

    @property
    def open(self) -> bool:
        """True while undisputed, within its budget, with units left."""
        return self.disputed is None and self.next < min(self.budget, len(self.units))

    def take(self) -> str | None:
        """Move on to its next unit (its text is at hand: no document to fetch)."""
        self.next += 1
        return None

    def requests(self, document: Document | None) -> list[JudgeRequest]:
        """The build's request of the unit taken."""
        return [self.units[self.next - 1].request]

    def record(self, request: JudgeRequest, result: Judgment) -> None:
        """Keep the second judge's answer: a pair for the agreement, a dispute, or a failure
        (counted by the engine, never a "no")."""
        unit = self.units[self.next - 1]
        if result.failed or result.label is None:
            self.failed += 1
            return
        if unit.first is not None:
            self.pairs.append((unit.first, result.label))
        if result.label == DISPUTING[self.row.label] and self.disputed is None:
            self.disputed = unit

    @property
    def undetermined(self) -> bool:
        """True when a judgment failed and nothing disputes the label."""
        return self.failed > 0 and self.disputed is None


def evidence_unit(row: LabeledQuestion) -> list[Unit]:
    """The accepted evidence of an answerable question, as the build asked its judge."""
    evidence = row.evidence
    if evidence is None:
        return []
    return [
        Unit(request(row, evidence.stage, evidence.doc_id, evidence.unit_id, evidence.text), "yes")
    ]


def request(
    row: LabeledQuestion,
    stage: Stage,
    doc_id: str,
    unit_id: str,
    text: str,
    span: tuple[int | None, int | None] = (None, None),
) -> JudgeRequest:
    """The prompt the build sent its judge for this unit of the question."""
    question = Question(row.id, row.question, row.answer, row.aliases)
    return JudgeRequest.for_unit(question, row.keywords, stage, doc_id, unit_id, text, span)


def _records(path: Any, cls: Any) -> Iterator[Any]:
    """The records of a shard's file, none when the step wrote none."""
    return iter_records(path, cls) if path.is_file() else iter(())


def build_units(
    rows: list[LabeledQuestion],
    shards: list[ShardLayout],
    fetch: FetchDocuments,
    windows: WindowSettings,
) -> dict[str, list[Unit]]:
    """The units the build judged for each of `rows`, in its order, with its judge's labels:
    a window cut again as the token stage cut it, a chunk's text from the vector search."""
    by_id = {row.id: row for row in rows}
    judged: dict[str, list[Judgment]] = {row.id: [] for row in rows}
    chunks: dict[tuple[str, str], str] = {}
    for shard in shards:
        for path in (shard.token_judgments, shard.vector_judgments):
            for judgment in _records(path, Judgment):
                if judgment.question_id in judged:
                    judged[judgment.question_id].append(judgment)
        for found in _records(shard.vector_candidates, VectorCandidates):
            if found.question_id in by_id:
                chunks.update({(found.question_id, h.chunk_id): h.text for h in found.hits})
    needed = {j.doc_id for js in judged.values() for j in js if j.stage == "token"}
    documents = fetch(sorted(needed)) if needed else {}
    out: dict[str, list[Unit]] = {}
    for qid, judgments in judged.items():
        row, cut = by_id[qid], _windows_of(by_id[qid], documents, windows)
        units = []
        for j in judgments:
            text = cut.get(j.unit_id) if j.stage == "token" else chunks.get((qid, j.unit_id))
            if text is not None:
                units.append(
                    Unit(
                        request(row, j.stage, j.doc_id, j.unit_id, text, (j.start, j.end)), j.label
                    )
                )
        out[qid] = units
    return out


def _windows_of(
    row: LabeledQuestion, documents: dict[str, Document], windows: WindowSettings
) -> dict[str, str]:
    """The texts of the windows the token stage cut from each document, by unit id."""
    cut = {}
    for document in documents.values():
        found, _ = judge_windows(document, row.keywords, row.aliases, windows)
        cut.update({f"{document.id}@w{w.index}": w.text for w in found})
    return cut


def disputed_entry(item: Rejudged) -> dict[str, Any]:
    """One disputed question: its id, the stage of the unit, and that unit."""
    assert item.disputed is not None
    unit = item.disputed.request
    return {
        "id": item.row.id,
        "stage": unit.stage,
        "evidence": {
            "doc_id": unit.doc_id,
            "unit_id": unit.unit_id,
            "text": unit.text,
            "start": unit.start,
            "end": unit.end,
        },
    }


def label_block(labelled: int, items: list[Rejudged]) -> dict[str, Any]:
    """One label's figures: counts, the disputed questions, the rate and its exact interval,
    the same by deciding stage, and the undetermined questions (`failed`)."""
    disputed = [item for item in items if item.disputed is not None]
    failed = sum(item.undetermined for item in items)
    determined = len(items) - failed
    stages = sorted({item.row.stage for item in items})
    by_stage = {}
    for stage in stages:
        mine = [item for item in items if item.row.stage == stage]
        settled = sum(not item.undetermined for item in mine)
        found = sum(item.disputed is not None for item in mine)
        by_stage[stage] = {
            "audited": len(mine),
            "disputed": found,
            "rate": found / settled if settled else None,
        }
    return {
        "labelled": labelled,
        "audited": len(items),
        "disputed": [disputed_entry(item) for item in disputed],
        "rate": len(disputed) / determined if determined else None,
        "ci95": clopper_pearson(len(disputed), determined),
        "by_stage": by_stage,
        "failed": failed,
    }


def agreement(pairs: list[Pair], seed: int) -> dict[str, Any]:
    """The two judges' agreement over `pairs`: units, the observed share, Cohen's kappa and its
    bootstrap 95% interval (over units)."""

    def of(sample: list[Pair]) -> float | None:
        return kappa([a for a, _ in sample], [b for _, b in sample])

    stats = bootstrap(pairs, {"kappa": of}, RESAMPLES, seed)["kappa"]
    observed = sum(a == b for a, b in pairs) / len(pairs) if pairs else None
    return {
        "units": len(pairs),
        "observed": observed,
        "kappa": stats["value"],
        "ci95": stats["ci95"],
    }


def undetermined_count(result: dict[str, Any]) -> int:
    """How many questions of a judge audit are undetermined (a judgment failed)."""
    return sum(int(result[label]["failed"]) for label in JUDGE_AUDITED)


@dataclass(frozen=True)
class SecondJudge:
    """The judge audit's judge (answers through the run's LLM cache) and what it is asked."""

    judge: RelevanceJudge
    identity: dict[str, Any]
    budget: int
    seed: int
    windows: WindowSettings


def rejudge(
    sampled: dict[str, list[LabeledQuestion]],
    labelled: dict[str, int],
    second: SecondJudge,
    shards: list[ShardLayout],
    fetch: FetchDocuments,
    stats: StepStats,
) -> tuple[dict[str, Any], list[Judgment]]:
    """The judge audit of the sampled questions (by label): what `audit.json` holds under
    `judge_audit` (its prompt tokens aside), and every judgment of the second judge."""
    others = [row for label in JUDGE_AUDITED[1:] for row in sampled[label]]
    units = build_units(others, shards, fetch, second.windows)
    items = [
        Rejudged(row, evidence_unit(row) if label == "answerable" else units[row.id], second.budget)
        for label in JUDGE_AUDITED
        for row in sampled[label]
    ]
    own = StepStats(Step.AUDIT)
    for label in JUDGE_AUDITED:
        own.add(f"{label}.audited", len(sampled[label]))
    rounds = max((min(len(item.units), item.budget) for item in items), default=0)
    judgments = judge_in_rounds(
        items, None, second.judge, own, desc="judge audit rounds", rounds=rounds
    )
    result: dict[str, Any] = {"judge": second.identity}
    for label in JUDGE_AUDITED:
        mine = [item for item in items if item.row.label == label]
        result[label] = label_block(labelled[label], mine)
        own.add(f"{label}.disputed", len(result[label]["disputed"]))
        own.add(f"{label}.undetermined", result[label]["failed"])
    result["agreement"] = agreement([pair for item in items for pair in item.pairs], second.seed)
    result["judge_calls"] = int(own.counts["prompts"])
    own.merge_counted(second.judge)
    for name, value in own.counts.items():
        stats.add(f"{PREFIX}{name}", value)
    for kind, value in own.errors.items():
        stats.error(f"{PREFIX}{kind}", value)
    return result, judgments
