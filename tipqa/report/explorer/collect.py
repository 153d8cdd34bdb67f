"""What the explorer shows of each question, gathered from a build's partition and shards.

A question's row (the table) and its details (the question's page) come from its pool's
partition (label, stage, reason, evidence) and its shard's files: the keywords, the token
search's hits, every token-stage judgment in judged order with the judge's raw reply, the
vector search's chunks and their judgments. Token-stage window texts are not stored by the
build: they are recomputed from the token index, as the annotation export does, for at most
`texts` windows a question (its "yes" window always); without an index only the stored
evidence has its text. A window recomputed at other offsets than the judged one (the index
changed since) is counted and not shown. Where the index gives the document, a window with
text and the evidence get `context` characters of the document on each side.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipqa.annotation.texts import FETCH_BATCH, recorded_windows
from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_records
from tipqa.core.layout import PoolLayout, ShardLayout
from tipqa.core.records import (
    LABELS,
    Document,
    Judgment,
    Keywords,
    LabeledQuestion,
    Question,
    TokenCandidates,
    VectorCandidates,
    Window,
)
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.report.explorer.why import why
from tipqa.stages.windows import judge_windows

DEFAULT_TEXTS = 10
"""Token-stage window texts recomputed per question by default (its "yes" window always)."""

CONTEXT = 300
"""Characters of the document shown on each side of a window, where the index gives them."""


@dataclass
class Collected:
    """One question of the explorer: its table row and its page's details."""

    row: dict[str, Any]
    details: dict[str, Any]


@dataclass
class TextSource:
    """Where window texts come from: the token index (`fetch`), at most `texts` a question,
    with `context` characters of the document around them."""

    fetch: FetchDocuments | None = None
    texts: int = DEFAULT_TEXTS
    context: int = CONTEXT
    counts: Counter[str] = field(default_factory=Counter)


def _by_question(path: Path, cls: type[Any]) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return {record.question_id: record for record in iter_records(path, cls)}


def _judgments(path: Path) -> dict[str, list[Judgment]]:
    """A shard's judgments per question, in the order they were made."""
    grouped: dict[str, list[Judgment]] = defaultdict(list)
    if path.is_file():
        for judgment in iter_records(path, Judgment):
            grouped[judgment.question_id].append(judgment)
    return grouped


def partition_rows(pool: PoolLayout) -> dict[str, LabeledQuestion]:
    """Every labelled question of a pool's partition, by id."""
    rows: dict[str, LabeledQuestion] = {}
    for label in LABELS:
        path = pool.partition / f"{label}.jsonl"
        if not path.is_file():
            raise InputError(
                "the partition has no file for this label (run Partition first)", path=str(path)
            )
        for row in iter_records(path, LabeledQuestion):
            rows[row.id] = row
    return rows


def _verdict(judgment: Judgment) -> str:
    return judgment.label if judgment.label is not None else "failed"


def _window_number(unit_id: str) -> int | None:
    _, sep, suffix = unit_id.rpartition("@w")
    return int(suffix) if sep and suffix.isdigit() else None


def _judged(judgment: Judgment) -> dict[str, Any]:
    """What the page shows of one judgment: the build's judge's verdict and, where a confirming
    judge (`[judge.confirm]`) was asked about its "yes", that judge's verdict and name."""
    confirmation = judgment.confirmation
    return {
        "verdict": _verdict(judgment),
        "p_yes": judgment.p_yes,
        "start": judgment.start,
        "end": judgment.end,
        "error": judgment.error,
        "raw": judgment.raw,
        "confirmed": None if confirmation is None else confirmation.label or "failed",
        "confirmer": None if confirmation is None else confirmation.judge,
        "text": None,
        "context": None,
    }


def token_documents(
    candidates: TokenCandidates | None, judgments: list[Judgment]
) -> list[dict[str, Any]]:
    """The token stage's judged documents in judged order, each with its windows' verdicts."""
    ranks = (
        {hit.doc_id: (rank, hit.score) for rank, hit in enumerate(candidates.hits, 1)}
        if (candidates is not None)
        else {}
    )
    documents: dict[str, dict[str, Any]] = {}
    for judgment in judgments:
        rank, score = ranks.get(judgment.doc_id, (None, None))
        document = documents.setdefault(
            judgment.doc_id,
            {"doc": judgment.doc_id, "rank": rank, "score": score, "qrel": 0, "windows": []},
        )
        if judgment.verdict == "yes":
            document["qrel"] = 1
        document["windows"].append({"unit": judgment.unit_id, **_judged(judgment)})
    return list(documents.values())


def vector_chunks(
    candidates: VectorCandidates | None, judgments: list[Judgment]
) -> list[dict[str, Any]]:
    """The vector stage's chunks by similarity, each with its verdict (None: not judged)."""
    verdicts = {j.unit_id: j for j in judgments}
    relevant_docs = {j.doc_id for j in judgments if j.verdict == "yes"}
    chunks = []
    for hit in candidates.hits if candidates is not None else []:
        judgment = verdicts.get(hit.chunk_id)
        judged = _judged(judgment) if judgment is not None else {"verdict": None, "context": None}
        chunks.append(
            {
                "chunk": hit.chunk_id,
                "doc": hit.doc_id,
                "score": hit.score,
                **judged,
                "qrel": int(hit.doc_id in relevant_docs) if judgment is not None else None,
                "text": hit.text,
            }
        )
    return chunks


def _context(document: Document, start: int, end: int, chars: int) -> tuple[str, str]:
    """The document's text just before `start` and just after `end`, at most `chars` each."""
    before = document.text[max(0, start - chars) : start]
    after = document.text[end : end + chars]
    if start > chars and " " in before:
        before = before[before.index(" ") + 1 :]
    if end + chars < len(document.text) and " " in after:
        after = after[: after.rindex(" ")]
    return before, after


@dataclass
class _Item:
    """A question of a shard on its way to the page."""

    row: LabeledQuestion
    candidates: TokenCandidates | None
    token: list[dict[str, Any]]
    vector: list[dict[str, Any]]

    def evidence_unit(self) -> dict[str, Any] | None:
        """The judged window or chunk that is the question's evidence."""
        if self.row.evidence is None:
            return None
        unit = self.row.evidence.unit_id
        units = [w for d in self.token for w in d["windows"]] + self.vector
        return next((u for u in units if u.get("unit", u.get("chunk")) == unit), None)


def _attach_texts(shard: ShardLayout, items: list[_Item], source: TextSource) -> None:
    """Give up to `source.texts` windows a question their text (the "yes" window always),
    and those windows and the evidence their context where the index gives the document."""
    wanted: list[tuple[_Item, dict[str, Any], dict[str, Any]]] = []
    for item in items:
        evidence = item.row.evidence
        taken = 0
        for document in item.token:
            for window in document["windows"]:
                if evidence is not None and window["unit"] == evidence.unit_id:
                    window["text"] = evidence.text
                    source.counts["texts_from_evidence"] += 1
                elif taken < source.texts and source.fetch is not None and item.candidates:
                    taken += 1
                    wanted.append((item, document, window))
                else:
                    source.counts["texts_left_out"] += 1
    if source.fetch is None:
        return
    proofs = [
        (item.row.evidence.doc_id, unit)
        for item in items
        if item.row.evidence is not None and (unit := item.evidence_unit()) is not None
    ]
    doc_ids = sorted({d["doc"] for _, d, _ in wanted} | {doc_id for doc_id, _ in proofs})
    documents: dict[str, Document] = {}
    for start in range(0, len(doc_ids), FETCH_BATCH):
        documents.update(source.fetch(doc_ids[start : start + FETCH_BATCH]))
    if wanted:
        _recompute(shard, wanted, documents, source)
    for doc_id, unit in proofs:
        found = documents.get(doc_id)
        if found is not None and unit["start"] is not None and unit["context"] is None:
            unit["context"] = _context(found, unit["start"], unit["end"], source.context)


def _recompute(
    shard: ShardLayout,
    wanted: list[tuple[_Item, dict[str, Any], dict[str, Any]]],
    documents: dict[str, Document],
    source: TextSource,
) -> None:
    """The wanted windows' texts, cut again from their documents as the judge got them."""
    settings = recorded_windows(shard)
    recomputed: dict[tuple[str, str], list[Window]] = {}
    for item, document, window in wanted:
        found = documents.get(document["doc"])
        number = _window_number(window["unit"])
        if found is None or number is None or item.candidates is None:
            source.counts["texts_not_found"] += 1
            continue
        key = (item.row.id, found.id)
        if key not in recomputed:
            keywords = item.candidates.keywords
            recomputed[key] = judge_windows(found, keywords, item.row.aliases, settings)[0]
        windows = recomputed[key]
        if number >= len(windows):
            source.counts["texts_not_found"] += 1
            continue
        again = windows[number]
        if window["start"] is not None and (again.start, again.end) != (
            window["start"],
            window["end"],
        ):
            source.counts["texts_not_as_judged"] += 1  # the index changed since: not shown
            continue
        window["text"] = again.text
        if again.start is not None and again.end is not None:
            window["context"] = _context(found, again.start, again.end, source.context)
        source.counts["texts_recomputed"] += 1


def collect_pool(
    name: str, pool: PoolLayout, membership: dict[str, str], source: TextSource
) -> Iterator[Collected]:
    """Every question of a pool's partition with its details, shard by shard."""
    rows = partition_rows(pool)
    seen: set[str] = set()
    for shard_root in sorted(pool.shards.glob("shard-*")):
        shard = ShardLayout(shard_root)
        questions = list(iter_records(shard.questions, Question))
        keywords = _by_question(shard.keywords, Keywords)
        token_hits = _by_question(shard.token_candidates, TokenCandidates)
        vector_hits = _by_question(shard.vector_candidates, VectorCandidates)
        token_judged = _judgments(shard.token_judgments)
        vector_judged = _judgments(shard.vector_judgments)
        items = []
        for question in questions:
            row = rows.get(question.id)
            if row is None:
                source.counts["questions_not_in_partition"] += 1
                continue
            seen.add(row.id)
            candidates = token_hits.get(row.id)
            token = token_documents(candidates, token_judged.get(row.id, []))
            vector = vector_chunks(vector_hits.get(row.id), vector_judged.get(row.id, []))
            items.append(_Item(row, candidates, token, vector))
        _attach_texts(shard, items, source)
        for item in items:
            row = item.row
            yield _collected(
                name, row, membership.get(row.id), keywords.get(row.id), item.token, item.vector
            )
    for row in rows.values():
        if row.id not in seen:
            source.counts["questions_without_shard_files"] += 1
            yield _collected(name, row, membership.get(row.id), None, [], [])


def _collected(
    pool: str,
    row: LabeledQuestion,
    split: str | None,
    keywords: Keywords | None,
    token: list[dict[str, Any]],
    vector: list[dict[str, Any]],
) -> Collected:
    judged = sum(len(d["windows"]) for d in token) + sum(c["verdict"] is not None for c in vector)
    evidence = None
    if row.evidence is not None:
        evidence = {"stage": row.evidence.stage, "doc": row.evidence.doc_id}
        evidence["unit"] = row.evidence.unit_id
    return Collected(
        row={
            "id": row.id,
            "question": row.question,
            "answer": row.answer,
            "label": row.label,
            "stage": row.stage,
            "split": split,
            "total": row.total_matches,
            "judged": judged,
        },
        details={
            "id": row.id,
            "pool": pool,
            "split": split,
            "question": row.question,
            "answer": row.answer,
            "aliases": row.aliases,
            "keywords": row.keywords,
            "extracted": keywords.keywords if keywords is not None else None,
            "label": row.label,
            "stage": row.stage,
            "reason": row.reason,
            "why": why(row, token, vector),
            "total": row.total_matches,
            "evidence": evidence,
            "token": token,
            "vector": vector,
        },
    )
