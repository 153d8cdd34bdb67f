"""A finished pool written by hand: partition, judgments, candidates, and its documents."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from random import Random

import pytest

from tipqa.core.jsonl import write_json, write_records
from tipqa.core.layout import PoolLayout
from tipqa.core.records import (
    Document,
    Evidence,
    Judgment,
    LabeledQuestion,
    TokenCandidates,
    TokenHit,
    VectorCandidates,
    VectorHit,
)
from tipqa.stages.windows import WindowSettings, judge_windows

WINDOWS = WindowSettings(max_words=40, max_windows=4)


@dataclass
class Pool:
    """A synthetic finished pool and the documents its token index would hold."""

    layout: PoolLayout
    documents: dict[str, Document]
    labels: dict[str, str]

    def fetch(self, doc_ids: list[str]) -> dict[str, Document]:
        """The token index's `get`: the stored documents with these ids."""
        return {d: self.documents[d] for d in doc_ids if d in self.documents}


class _Shard:
    def __init__(self) -> None:
        self.token_judgments: list[Judgment] = []
        self.vector_judgments: list[Judgment] = []
        self.token_candidates: list[TokenCandidates] = []
        self.vector_candidates: list[VectorCandidates] = []


def _document(qid: str, rank: int, topic: str, answer: str) -> Document:
    filler = " ".join(f"word{k}" for k in range(30))
    text = (
        f"Intro {qid} {rank}.\n\n{filler}\n\n"
        f'{topic} is in this paragraph with {answer}, and "quotes", commas.\n\n{filler}'
    )
    return Document(f"{qid}-d{rank}", text)


def _token(shard: _Shard, documents: dict, qid: str, topic: str, answer: str, labels: list):
    """Token judgments of one question (one window per document); the evidence if any."""
    hits, evidence = [], None
    for rank, label in enumerate(labels):
        doc = _document(qid, rank, topic, answer)
        documents[doc.id] = doc
        windows, _ = judge_windows(doc, [topic], [answer], WINDOWS)
        unit = f"{doc.id}@w{len(windows) - 1}"
        hits.append(TokenHit(doc.id, 1.0))
        shard.token_judgments.append(
            Judgment(qid, "token", doc.id, unit, label, "" if label is None else label, "t")
        )
        if label == "yes" and evidence is None:
            evidence = Evidence("token", doc.id, unit, windows[-1].text)
    shard.token_candidates.append(TokenCandidates(qid, [topic], len(labels), hits))
    return evidence


def _vector(shard: _Shard, qid: str, labels: list):
    """Vector judgments of one question; the evidence if any."""
    hits, evidence = [], None
    for rank, label in enumerate(labels):
        hit = VectorHit(f"{qid}-c{rank}", f"{qid}-v{rank}", 0.5, f"Chunk {rank} of {qid}.")
        hits.append(hit)
        shard.vector_judgments.append(
            Judgment(qid, "vector", hit.doc_id, hit.chunk_id, label, str(label), "t")
        )
        if label == "yes" and evidence is None:
            evidence = Evidence("vector", hit.doc_id, hit.chunk_id, hit.text)
    shard.vector_candidates.append(VectorCandidates(qid, hits))
    return evidence


def build_pool(
    root: Path,
    token_answerable: int = 30,
    vector_answerable: int = 12,
    unanswerable: int = 30,
    discarded: int = 4,
    undetermined: int = 3,
    shards: int = 3,
) -> Pool:
    """Write a pool with questions of every outcome; some judgments failed (label None)."""
    rng = Random(7)
    layout = PoolLayout(root / "pool")
    parts = [_Shard() for _ in range(shards)]
    documents: dict[str, Document] = {}
    rows: dict[str, list[LabeledQuestion]] = {
        k: [] for k in ("answerable", "unanswerable", "discarded", "undetermined")
    }
    kinds = (
        ["token_answerable"] * token_answerable
        + ["vector_answerable"] * vector_answerable
        + ["unanswerable"] * unanswerable
        + ["discarded"] * discarded
        + ["undetermined"] * undetermined
    )
    for i, kind in enumerate(kinds):
        qid, topic, answer = f"q{i:04d}", f"Topic{i}", f"Answer{i}"
        shard = parts[i % shards]
        evidence, stage, label = None, "token", kind
        if kind == "token_answerable":
            evidence = _token(
                shard, documents, qid, topic, answer, ["no"] * rng.randint(0, 3) + ["yes"]
            )
            label = "answerable"
        elif kind == "discarded":
            _token(shard, documents, qid, topic, answer, ["no"] * 5)
        elif kind == "undetermined":
            _token(shard, documents, qid, topic, answer, ["no", None])
        else:
            _token(shard, documents, qid, topic, answer, ["no"] * rng.randint(0, 3))
            stage = "vector"
            if kind == "vector_answerable":
                labels = ["no"] * 6 + ["yes"] * rng.randint(1, 2) + [None]
                rng.shuffle(labels)
                evidence = _vector(shard, qid, labels)
                label = "answerable"
            else:
                _vector(shard, qid, ["no"] * 10)
        rows[label].append(
            LabeledQuestion(
                qid,
                f"What about {topic}?",
                answer,
                [answer],
                label,
                stage,
                "made by hand",
                [topic],
                3,
                evidence,
            )
        )
    for index, shard in enumerate(parts):
        folder = layout.shard(index)
        write_records(folder.token_judgments, shard.token_judgments)
        write_records(folder.vector_judgments, shard.vector_judgments)
        write_records(folder.token_candidates, shard.token_candidates)
        write_records(folder.vector_candidates, shard.vector_candidates)
        write_json(folder.stats("token_judge"), {"info": dict(WINDOWS.__dict__, k1=20)})
    for label, items in rows.items():
        write_records(layout.partition / f"{label}.jsonl", items)
    labels = {row.id: label for label, items in rows.items() for row in items}
    return Pool(layout, documents, labels)


@pytest.fixture
def make_pool(tmp_path: Path) -> Callable[..., Pool]:
    """Build a synthetic finished pool under the test's tmp folder."""
    return lambda **sizes: build_pool(tmp_path, **sizes)
