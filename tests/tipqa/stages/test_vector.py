"""Vector stage: every retrieved chunk judged, each instance recorded, one decision per question."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tipqa.core.records import (
    Document,
    JudgeRequest,
    Judgment,
    Keywords,
    Question,
    VectorCandidates,
    VectorHit,
)
from tipqa.core.stats import StepStats
from tipqa.stages.vector import judge_vector_candidates, search_vectors


@dataclass
class ChunkJudge:
    """A deterministic judge: the verdict of each chunk id ("yes", "no" or "fail")."""

    verdicts: dict[str, str]
    name: str = "chunks"
    seen: list[JudgeRequest] = field(default_factory=list)

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request; "fail" gives label None with an error."""
        self.seen.extend(requests)
        out = []
        for r in requests:
            verdict = self.verdicts[r.unit_id]
            label = None if verdict == "fail" else verdict
            error = "unparsable: maybe" if verdict == "fail" else None
            out.append(
                Judgment(r.question_id, r.stage, r.doc_id, r.unit_id, label, verdict, "t", error)
            )
        return out


def setup(verdicts: dict[str, list[str]]):
    """Questions q0.. with chunks `<qid>-c<i>` whose verdicts are given per question."""
    questions, candidates, keywords, table = [], {}, {}, {}
    for qid, labels in verdicts.items():
        q = Question(qid, f"Question {qid}?", f"answer {qid}", [f"answer {qid}"])
        questions.append(q)
        hits = []
        for i, label in enumerate(labels):
            chunk = f"{qid}-c{i}"
            hits.append(VectorHit(chunk, f"doc-{qid}-{i}", 1.0 - i / 10, f"text of {chunk}"))
            table[chunk] = label
        candidates[qid] = VectorCandidates(qid, hits)
        keywords[qid] = Keywords(qid, [f"kw {qid}"])
    return questions, candidates, keywords, ChunkJudge(table)


def test_labels_instances_and_evidence() -> None:
    questions, candidates, keywords, judge = setup(
        {
            "yes": ["no", "fail", "yes", "yes"],
            "fail": ["no", "fail", "no"],
            "no": ["no", "no"],
            "empty": [],
        }
    )
    stats = StepStats("vector_judge")
    decisions, judgments, instances = judge_vector_candidates(
        questions, candidates, keywords, judge, stats
    )
    assert [(d.question_id, d.label) for d in decisions] == [
        ("yes", "answerable"),
        ("fail", "undetermined"),
        ("no", "unanswerable"),
        ("empty", "unanswerable"),
    ]
    answerable, undetermined, unanswerable, _ = decisions
    assert answerable.evidence is not None
    assert (answerable.evidence.stage, answerable.evidence.doc_id) == ("vector", "doc-yes-2")
    assert (answerable.evidence.unit_id, answerable.evidence.text) == ("yes-c2", "text of yes-c2")
    assert "1 of 3 judgment(s) failed: unparsable: maybe" in undetermined.reason
    assert undetermined.evidence is None and unanswerable.evidence is None
    assert "none of the 2 nearest chunks" in unanswerable.reason
    assert [d.judged for d in decisions] == [4, 3, 2, 0]
    assert all(d.stage == "vector" for d in decisions)

    assert len(judgments) == 9
    assert [(i.chunk_id, i.relevant) for i in instances] == [
        ("yes-c0", False), ("yes-c1", None), ("yes-c2", True), ("yes-c3", True),
        ("fail-c0", False), ("fail-c1", None), ("fail-c2", False),
        ("no-c0", False), ("no-c1", False),
    ]  # fmt: skip
    first = instances[0]
    assert (first.question_id, first.question, first.answer) == (
        "yes",
        "Question yes?",
        "answer yes",
    )
    assert (first.doc_id, first.text, first.score) == ("doc-yes-0", "text of yes-c0", 1.0)

    assert stats.counts["prompts"] == 9
    assert stats.errors == {"judgment_unparsable": 2}
    assert stats.counts["outcome_answerable"] == 1
    assert stats.counts["outcome_unanswerable"] == 2


def test_requests_carry_question_keywords_and_chunk() -> None:
    questions, candidates, keywords, judge = setup({"q0": ["no"]})
    judge_vector_candidates(questions, candidates, keywords, judge, StepStats("v"))
    [request] = judge.seen
    assert request == JudgeRequest(
        question_id="q0",
        question="Question q0?",
        answer="answer q0",
        aliases=["answer q0"],
        keywords=["kw q0"],
        stage="vector",
        doc_id="doc-q0-0",
        unit_id="q0-c0",
        text="text of q0-c0",
    )


def test_judge_not_called_without_candidates() -> None:
    questions, candidates, keywords, judge = setup({"q0": []})
    decisions, judgments, instances = judge_vector_candidates(
        questions, candidates, keywords, judge, StepStats("v")
    )
    assert judge.seen == [] and judgments == [] and instances == []
    assert decisions[0].label == "unanswerable"


class LengthEmbedder:
    """A two-dimensional embedding of a text: its length and 1 (a seam double)."""

    name = "length"
    dimension = 2

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


class NearestIndex:
    """Chunks at points on a line; the k nearest by the first coordinate (a seam double)."""

    def __init__(self, points: dict[float, str]) -> None:
        self.points = points

    def search(self, vectors: np.ndarray, k: int) -> list[list[VectorHit]]:
        out = []
        for vector in vectors:
            ranked = sorted(self.points, key=lambda p: abs(p - float(vector[0])))[:k]
            out.append([VectorHit(self.points[p], "d", -abs(p - vector[0]), "t") for p in ranked])
        return out


def test_search_vectors_in_batches_keeps_question_order() -> None:
    questions = [Question(f"q{i}", "x" * (i + 1), "a", ["a"]) for i in range(5)]
    embedder = LengthEmbedder()
    index = NearestIndex({1.0: "c1", 3.0: "c3", 5.0: "c5"})
    stats = StepStats("vector_search")
    found = search_vectors(questions, embedder, index, 2, stats, batch_size=2)
    assert [len(b) for b in embedder.batches] == [2, 2, 1]
    assert [c.question_id for c in found] == ["q0", "q1", "q2", "q3", "q4"]
    assert [c.hits[0].chunk_id for c in found] == ["c1", "c1", "c3", "c3", "c5"]
    assert stats.counts == {"questions": 5, "hits_returned": 10}


def test_requests_carry_where_each_chunk_is_in_its_document() -> None:
    questions, candidates, keywords, judge = setup({"q0": ["no", "yes"]})
    documents = {
        "doc-q0-0": Document("doc-q0-0", "Intro. text of q0-c0 and more."),
        "doc-q0-1": Document("doc-q0-1", "Nothing of the chunk here."),
    }
    stats = StepStats("v")
    judge_vector_candidates(questions, candidates, keywords, judge, stats, lambda ids: documents)
    assert [(r.start, r.end) for r in judge.seen] == [(7, 20), (None, None)]
    assert documents["doc-q0-0"].text[7:20] == "text of q0-c0"
    assert stats.counts["chunks_located"] == 1 and stats.counts["chunks_not_located"] == 1
