"""Every relevant evidence of the answerable questions, and when it was first consumed.

The token stage records, per judged window, a `Judgment` whose `unit_id` is
"{doc_id}@w{window index}"; the window's text is rebuilt from the document exactly as the
stage cut it (same keywords, aliases and window settings). The vector stage records every
judged chunk with its text (`VectorInstance`). With `judge_all_candidates` the token stage
judges all k1 candidates, so its "yes" windows are all the relevant ones among them;
without it, only those up to the first "yes".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from tipqa.boundary.records import FirstSeen, SeenEvidence
from tipqa.core.errors import InputError
from tipqa.core.records import Evidence, Judgment, Keywords, Question, VectorInstance
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.stages.windows import WindowSettings, judge_windows
from tipqa.training_order.base import TrainingOrder, WantedSpan


def _window_index(unit_id: str) -> int:
    """The window number of a token-stage unit id ("{doc_id}@w{index}")."""
    _, marker, index = unit_id.rpartition("@w")
    if not marker or not index.isdigit():
        raise InputError(f"not a token-stage window id: {unit_id!r}", field="unit_id")
    return int(index)


def token_evidence(
    questions: Sequence[Question],
    keywords: Mapping[str, Keywords],
    judgments: Iterable[Judgment],
    fetch: FetchDocuments,
    windows: WindowSettings,
) -> dict[str, list[Evidence]]:
    """The token-stage windows judged relevant ("yes"), per question, in judging order."""
    by_id = {q.id: q for q in questions}
    wanted = [
        j for j in judgments if j.stage == "token" and j.verdict == "yes" and j.question_id in by_id
    ]
    documents = fetch(sorted({j.doc_id for j in wanted}))
    cut: dict[tuple[str, str], list[str]] = {}
    out: dict[str, list[Evidence]] = {}
    for judgment in wanted:
        question = by_id[judgment.question_id]
        document = documents.get(judgment.doc_id)
        if document is None:
            raise InputError(
                f"question {question.id}: relevant document {judgment.doc_id!r} is not in the "
                "token index",
                field="doc_id",
            )
        key = (question.id, document.id)
        if key not in cut:
            words = keywords[question.id].keywords
            found, _ = judge_windows(document, words, question.aliases, windows)
            cut[key] = [w.text for w in found]
        index = _window_index(judgment.unit_id)
        if index >= len(cut[key]):
            raise InputError(
                f"question {question.id}: window {judgment.unit_id!r} does not exist with these "
                "window settings (were they changed after judging?)",
                field="unit_id",
            )
        evidence = Evidence("token", document.id, judgment.unit_id, cut[key][index])
        listed = out.setdefault(question.id, [])
        if evidence not in listed:
            listed.append(evidence)
    return out


def vector_evidence(instances: Iterable[VectorInstance]) -> dict[str, list[Evidence]]:
    """The vector-stage chunks judged relevant, per question, in rank order."""
    out: dict[str, list[Evidence]] = {}
    for instance in instances:
        if instance.relevant:
            out.setdefault(instance.question_id, []).append(
                Evidence("vector", instance.doc_id, instance.chunk_id, instance.text)
            )
    return out


def span_id(evidence: Evidence) -> str:
    """One id per (document, text): the same window of two questions is looked up once."""
    digest = hashlib.sha256(f"{evidence.doc_id}\x00{evidence.text}".encode()).hexdigest()
    return digest[:24]


def first_seen(
    evidence: Mapping[str, Sequence[Evidence]],
    order: TrainingOrder,
    fetch: FetchDocuments,
    stats: StepStats | None = None,
) -> dict[str, FirstSeen]:
    """Each question's first training step over all its relevant evidence."""
    stats = stats if stats is not None else StepStats("first_seen")
    spans = {
        span_id(e): WantedSpan(span_id(e), e.doc_id, e.text) for es in evidence.values() for e in es
    }
    steps = order.first_steps(list(spans.values()), fetch)
    out: dict[str, FirstSeen] = {}
    for question_id, items in evidence.items():
        relevant = []
        for item in items:
            found = steps[span_id(item)]
            relevant.append(
                SeenEvidence(
                    item.stage,
                    item.doc_id,
                    item.unit_id,
                    item.text,
                    found.step,
                    found.matched,
                    found.unlocated,
                    found.exact,
                )
            )
        exact = all(seen.exact for seen in relevant)
        dated = [(seen.step, rank) for rank, seen in enumerate(relevant) if seen.step is not None]
        if dated:
            step, rank = min(dated)
            evidence_at = relevant[rank].evidence()
            out[question_id] = FirstSeen(question_id, step, evidence_at, relevant, exact)
            stats.add("questions_seen")
            stats.add("questions_seen_upper_bound", int(not exact))
        else:
            out[question_id] = FirstSeen(question_id, None, None, relevant, exact)
            stats.add("questions_never_seen")
        stats.add("evidence", len(relevant))
        stats.add("evidence_upper_bound", sum(not seen.exact for seen in relevant))
    stats.add("spans", len(spans))
    return out
