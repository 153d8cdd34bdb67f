"""Where the audit searches and how it judges, on the planted world's token index."""

from __future__ import annotations

from collections import Counter

import pytest
from support.audit_support import PerfectJudge, planted_documents, planted_questions

from tipqa.audit.judging import AuditedQuestion, judge_rounds
from tipqa.audit.pool import sample_ids
from tipqa.audit.relaxations import (
    ALIAS_ONLY,
    KEYWORDS_MINUS_ONE,
    TOKEN_AFTER_K1,
    VECTOR_DEEPER,
    BuildView,
    Candidate,
    alias_only,
    interleave,
    keywords_minus_one,
    token_after_k1,
    vector_deeper,
)
from tipqa.core.records import (
    Document,
    JudgeRequest,
    Judgment,
    Question,
    VectorCandidates,
    VectorHit,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.stages.windows import WindowSettings

DOCUMENTS = planted_documents()
QUESTIONS = planted_questions()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TantivyTokenIndex:
    """The planted world's documents in a tantivy index."""
    built = TantivyTokenIndex.at(tmp_path_factory.mktemp("index"), threads=1)
    built.build(DOCUMENTS.values())
    return built


def view(
    qid: str,
    label: str = "unanswerable",
    docs: frozenset = frozenset(),
    chunks: frozenset = frozenset(),
) -> BuildView:
    """A question as a build with the rule keywords saw it, having judged `docs` and `chunks`."""
    question = QUESTIONS[qid]
    return BuildView(question, label, extract_keywords(question.text), docs, chunks)


def fetch(ids: list[str]) -> dict[str, Document]:
    return {i: DOCUMENTS[i] for i in ids if i in DOCUMENTS}


def test_leaving_out_the_keyword_the_evidence_lacks_reaches_it(index: TantivyTokenIndex) -> None:
    found = keywords_minus_one(view("wrong_keyword"), index, depth=5)
    assert [(c.doc_id, c.relaxation) for c in found] == [
        ("d08", 'keywords without "Harrowgate Almanac"')
    ]
    assert found[0].keywords == ("Selwyn Droke",) and found[0].cause == KEYWORDS_MINUS_ONE
    assert keywords_minus_one(view("misspelled"), index, depth=5) == [], (
        "one keyword: no relaxation"
    )


def test_documents_the_build_judged_are_never_candidates(index: TantivyTokenIndex) -> None:
    assert keywords_minus_one(view("wrong_keyword", docs=frozenset({"d08"})), index, depth=5) == []
    after = token_after_k1(view("after_k1", "discarded"), index, k1=3, depth=5)
    assert [c.cause for c in after] == [TOKEN_AFTER_K1] * 2
    assert after[-1].doc_id == "d20" and after[-1].relaxation.endswith("5 of 5 (after k1 = 3)")
    skipped = token_after_k1(
        view("after_k1", "discarded", docs=frozenset({"d20"})), index, k1=3, depth=5
    )
    assert "d20" not in [c.doc_id for c in skipped]


def test_an_alias_alone_ranks_by_bm25_or_by_alias_occurrences(index: TantivyTokenIndex) -> None:
    ranked = alias_only(view("misspelled"), index, index, depth=3)
    assert [c.doc_id for c in ranked] == ["d04"], "the only document with the alias"
    assert ranked[0].cause == ALIAS_ONLY and "BM25" in ranked[0].relaxation
    counted = alias_only(view("misspelled"), index, None, depth=3)
    assert [c.doc_id for c in counted] == ["d04"] and "occurrences" in counted[0].relaxation


def chunk(doc_id: str) -> VectorHit:
    return VectorHit(f"{doc_id}#0", doc_id, 0.5, DOCUMENTS[doc_id].text)


def test_the_vector_stage_deeper_skips_the_chunks_the_build_judged() -> None:
    order = ["d13", "d15", "d14", "d12"]

    def nearest(questions: list[Question], k: int) -> list[VectorCandidates]:
        assert k == 2 + 3
        return [VectorCandidates(q.id, [chunk(d) for d in order][:k]) for q in questions]

    judged = view("deeper", chunks=frozenset({"d13#0", "d15#0"}))
    found = vector_deeper([judged], nearest, k2=2, depth=3)["deeper"]
    assert [(c.chunk.chunk_id, c.cause) for c in found if c.chunk] == [
        ("d14#0", VECTOR_DEEPER),
        ("d12#0", VECTOR_DEEPER),
    ]
    assert found[1].relaxation == "nearest chunk 4 (after k2 = 2)"


def test_relaxations_take_turns_and_each_unit_is_judged_once() -> None:
    a = [Candidate("x", "x", d) for d in ("d1", "d2", "d3")]
    b = [Candidate("y", "y", d) for d in ("d2", "d4")]
    c = [Candidate("z", "z", "d1", chunk=chunk("d01"))]
    assert [(x.cause, x.unit) for x in interleave([a, b, c, []])] == [
        ("x", "d1"), ("y", "d2"), ("z", "d01#0"), ("y", "d4"), ("x", "d3"),
    ]  # fmt: skip


def test_a_question_stops_at_its_first_yes_within_its_budget(index: TantivyTokenIndex) -> None:
    judge, stats = PerfectJudge(), StepStats("audit")
    found = view("after_k1", "discarded")
    candidates = interleave(
        [token_after_k1(found, index, 3, 5), alias_only(found, index, index, 5)]
    )
    audit = AuditedQuestion(found, candidates, budget=10)
    judge_rounds([audit], fetch, judge, WindowSettings(), stats)
    assert audit.finding is not None and audit.finding.evidence.doc_id == "d20"
    assert audit.finding.label == "discarded"
    assert audit.finding.evidence.text.startswith("The climber Brannoc Hale first climbed Serrik")
    asked = [r.doc_id for r in judge.asked]
    assert asked[-1] == "d20" and len(asked) == len(set(asked)) == audit.spent
    assert all(r.stage == "audit" and r.keywords == ["Brannoc Hale"] for r in judge.asked)


class NoJudge:
    """A judge that finds nothing relevant, counting what it was asked."""

    name = "no"

    def __init__(self) -> None:
        self.asked: list[JudgeRequest] = []

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        self.asked += requests
        return [Judgment.of(r, label="no", raw="no", judge=self.name) for r in requests]


def test_the_budget_holds_however_many_windows_the_candidates_have() -> None:
    question = Question("q", "Which town did Ada Rell build?", "Tolm", ["Tolm"])
    text = "\n\n".join(f"Ada Rell saw Tolm on visit {j}." for j in range(6))
    documents = {f"w{i}": Document(f"w{i}", text) for i in range(4)}
    built = BuildView(question, "unanswerable", ["Ada Rell"], frozenset(), frozenset())
    candidates = [Candidate(KEYWORDS_MINUS_ONE, "r", i, ("Ada Rell",)) for i in documents]
    audit, judge, stats = (
        AuditedQuestion(built, candidates, budget=8),
        NoJudge(),
        StepStats("audit"),
    )
    judge_rounds(
        [audit], lambda ids: {i: documents[i] for i in ids}, judge, WindowSettings(), stats
    )
    assert audit.spent == 8 == len(judge.asked) and audit.finding is None
    assert Counter(r.doc_id for r in judge.asked) == {"w0": 6, "w1": 2}
    assert stats.counts["windows_over_budget"] == 4
    assert stats.counts["questions_over_budget"] == 1


def test_the_sample_is_seeded_rounded_up_and_drawn_per_label() -> None:
    ids = [f"q{i}" for i in range(30)]
    first = sample_ids(ids, 0.1, 0, "unanswerable")
    assert len(first) == 3 and first == sample_ids(reversed(ids), 0.1, 0, "unanswerable")
    assert first != sample_ids(ids, 0.1, 1, "unanswerable")
    assert first != sample_ids(ids, 0.1, 0, "discarded")
    assert len(sample_ids(ids[:4], 0.1, 0, "unanswerable")) == 1
    assert sample_ids(ids, 1.0, 0, "unanswerable") == sorted(ids)
    assert sample_ids([], 0.5, 0, "discarded") == []
