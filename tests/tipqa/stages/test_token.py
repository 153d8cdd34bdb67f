"""Token stage: early-exit judging gives the labels of judging everything, with fewer calls."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tipqa.core.records import (
    Document,
    JudgeRequest,
    Judgment,
    Keywords,
    Question,
    TokenCandidates,
    TokenHit,
)
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.stages.token import judge_token_candidates, search_tokens
from tipqa.stages.windows import WindowSettings, judge_windows

KW = "Kellan Dusk"
ALIAS = "Varnholt"
WINDOWS = WindowSettings(max_words=40, max_windows=4)


@dataclass
class TableJudge:
    """A deterministic judge: per (question, document) a cycle of window verdicts."""

    table: dict[tuple[str, str], tuple[str, ...]]
    name: str = "table"
    calls: list[list[JudgeRequest]] = field(default_factory=list)

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request; "fail" gives a failed judgment (label None)."""
        self.calls.append(list(requests))
        out = []
        for r in requests:
            window = int(r.unit_id.rsplit("@w", 1)[1])
            verdicts = self.table[(r.question_id, r.doc_id)]
            verdict = verdicts[window % len(verdicts)]
            label = None if verdict == "fail" else verdict
            error = "server_error: 503" if verdict == "fail" else None
            out.append(
                Judgment(
                    r.question_id, r.stage, r.doc_id, r.unit_id, label, verdict, self.name, error
                )
            )
        return out

    def judged_documents(self) -> set[tuple[str, str]]:
        """The (question, document) pairs the judge saw."""
        return {(r.question_id, r.doc_id) for call in self.calls for r in call}


class Store:
    """The fetch function of the stage: the stored documents, and what was asked."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.documents = {d.id: d for d in documents}
        self.asked: list[list[str]] = []

    def __call__(self, doc_ids: list[str]) -> dict[str, Document]:
        self.asked.append(list(doc_ids))
        return {i: self.documents[i] for i in doc_ids if i in self.documents}


def question(index: int) -> Question:
    return Question(f"q{index}", f"In which city was {KW} born?", ALIAS, [ALIAS])


def candidates(qid: str, doc_ids: list[str], total: int | None = None) -> TokenCandidates:
    hits = [TokenHit(d, float(len(doc_ids) - i)) for i, d in enumerate(doc_ids)]
    return TokenCandidates(qid, [KW], len(doc_ids) if total is None else total, hits)


def random_text(rng: random.Random) -> str:
    """A document of 0-5 paragraphs, some with the keyword, the alias, or both."""
    pieces = ["Barley grows on the slopes.", f"{KW} travelled.", f"{ALIAS} is a city.",
              f"{KW} was born in {ALIAS}.", " ".join(["word"] * rng.randint(30, 90))]  # fmt: skip
    return "\n\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))


def reference(
    questions: list[Question],
    cands: dict[str, TokenCandidates],
    documents: dict[str, Document],
    table: dict[tuple[str, str], tuple[str, ...]],
    k1: int,
) -> dict[str, tuple[str, str | None, str | None, int]]:
    """Judge every candidate: (label, first yes doc, its first yes unit, documents judged)."""
    out = {}
    for q in questions:
        ranked = cands[q.id].hits[:k1]
        verdicts: list[tuple[str, str | None]] = []
        for hit in ranked:
            if hit.doc_id not in documents:
                verdicts.append(("fail", None))
                continue
            windows, _ = judge_windows(documents[hit.doc_id], [KW], q.aliases, WINDOWS)
            cycle = table[(q.id, hit.doc_id)]
            labels = [cycle[w.index % len(cycle)] for w in windows]
            if "yes" in labels:
                verdicts.append(("yes", f"{hit.doc_id}@w{labels.index('yes')}"))
            else:
                verdicts.append(("fail" if "fail" in labels else "no", None))
        kinds = [v for v, _ in verdicts]
        if "yes" in kinds:
            first = kinds.index("yes")
            out[q.id] = ("answerable", ranked[first].doc_id, verdicts[first][1], len(ranked))
        elif "fail" in kinds:
            out[q.id] = ("undetermined", None, None, len(ranked))
        elif cands[q.id].total > k1:
            out[q.id] = ("discarded", None, None, len(ranked))
        else:
            out[q.id] = ("to_vector", None, None, len(ranked))
    return out


def random_case(rng: random.Random):
    """Questions, candidates, stored documents, a verdict table and k1."""
    pool = [f"d{i:02d}" for i in range(rng.randint(1, 14))]
    missing = {d for d in pool if rng.random() < 0.08}
    documents = {d: Document(d, random_text(rng)) for d in pool if d not in missing}
    k1 = rng.randint(1, 10)
    p_yes, p_fail = rng.choice([(0.0, 0.0), (0.1, 0.0), (0.1, 0.1), (0.3, 0.05), (0.0, 0.2)])
    questions, cands, table = [], {}, {}
    for i in range(rng.randint(1, 7)):
        q = question(i)
        questions.append(q)
        doc_ids = rng.sample(pool, rng.randint(0, len(pool)))
        total = len(doc_ids) + rng.choice([0, 0, rng.randint(1, 40)])
        cands[q.id] = candidates(q.id, doc_ids, total)
        for d in pool:
            verdicts = tuple(
                rng.choices(["yes", "no", "fail"], [p_yes, 1 - p_yes - p_fail, p_fail])[0]
                for _ in range(rng.randint(1, 3))
            )
            table[(q.id, d)] = verdicts
    return questions, cands, documents, table, k1


def test_early_exit_labels_equal_judging_every_candidate() -> None:
    rng = random.Random(20240611)
    seen: set[str] = set()
    saved = 0
    for case in range(400):
        questions, cands, documents, table, k1 = random_case(rng)
        judge, store, stats = TableJudge(table), Store(documents.values()), StepStats("t")
        decisions, judgments = judge_token_candidates(
            questions, cands, store, judge, k1, WINDOWS, stats
        )
        expected = reference(questions, cands, documents, table, k1)
        assert [d.question_id for d in decisions] == [q.id for q in questions]
        for d in decisions:
            label, doc_id, unit_id, full = expected[d.question_id]
            context = f"case {case}, {d.question_id}: {d}"
            assert d.label == label, context
            assert d.stage == "token" and d.total_matches == cands[d.question_id].total
            assert d.judged <= full, context
            if label == "answerable":
                assert d.evidence is not None, context
                assert (d.evidence.doc_id, d.evidence.unit_id) == (doc_id, unit_id), context
            else:
                assert d.evidence is None and d.judged == full, context
            seen.add(label)
        judged = sum(d.judged for d in decisions)
        everything = sum(e[3] for e in expected.values())
        assert judged <= everything
        assert stats.counts["documents_judged"] == judged
        assert stats.counts["documents_skipped_by_early_exit"] == everything - judged
        assert len(judge.judged_documents()) <= judged
        assert all(j.failed == (j.label is None) for j in judgments)
        assert all(ids == sorted(set(ids)) for ids in store.asked)
        saved += everything - judged
    assert seen == {"answerable", "undetermined", "discarded", "to_vector"}
    assert saved > 0


def test_judging_all_candidates_keeps_the_early_exit_labels_and_evidence() -> None:
    rng = random.Random(20241207)
    beyond = 0
    for case in range(400):
        questions, cands, documents, table, k1 = random_case(rng)
        store = Store(documents.values())
        early, _ = judge_token_candidates(
            questions, cands, store, TableJudge(table), k1, WINDOWS, StepStats("t")
        )
        judge, stats = TableJudge(table), StepStats("t")
        every, judgments = judge_token_candidates(
            questions, cands, store, judge, k1, WINDOWS, stats, judge_all=True
        )
        expected = reference(questions, cands, documents, table, k1)
        for a, b in zip(early, every, strict=True):
            context = f"case {case}, {a.question_id}"
            assert (a.label, a.evidence, a.reason, a.total_matches) == (
                b.label, b.evidence, b.reason, b.total_matches,
            ), context  # fmt: skip
            assert b.judged == expected[b.question_id][3], context
        reachable = {
            (q.id, h.doc_id)
            for q in questions
            for h in cands[q.id].hits[:k1]
            if h.doc_id not in documents
            or judge_windows(documents[h.doc_id], [KW], q.aliases, WINDOWS)[0]
        }
        assert {(j.question_id, j.doc_id) for j in judgments} == reachable
        assert stats.counts["documents_skipped_by_early_exit"] == 0
        beyond += stats.counts["documents_judged_after_a_yes"]
    assert beyond > 0


def test_missing_document_is_undetermined_never_no() -> None:
    q = question(0)
    cands = {q.id: candidates(q.id, ["gone", "d1"], total=50)}
    store = Store([Document("d1", f"{KW} travelled to {ALIAS}.")])
    judge = TableJudge({(q.id, "d1"): ("no",)})
    stats = StepStats("t")
    [decision], judgments = judge_token_candidates([q], cands, store, judge, 5, WINDOWS, stats)
    assert decision.label == "undetermined"
    assert "gone: missing_document" in decision.reason
    assert decision.judged == 2
    assert stats.errors["missing_document"] == 1
    missing = [j for j in judgments if j.doc_id == "gone"]
    assert len(missing) == 1 and missing[0].label is None
    assert missing[0].error == "missing_document"


def test_missing_document_then_yes_is_answerable() -> None:
    q = question(0)
    cands = {q.id: candidates(q.id, ["gone", "d1"])}
    store = Store([Document("d1", f"{KW} was born in {ALIAS}.")])
    judge = TableJudge({(q.id, "d1"): ("yes",)})
    [decision], _ = judge_token_candidates([q], cands, store, judge, 5, WINDOWS, StepStats("t"))
    assert decision.label == "answerable"
    assert decision.evidence is not None and decision.evidence.doc_id == "d1"


def test_failed_judgment_is_undetermined_with_its_error() -> None:
    q = question(0)
    cands = {q.id: candidates(q.id, ["d1", "d2"], total=500)}
    store = Store([Document("d1", "Text one."), Document("d2", "Text two.")])
    judge = TableJudge({(q.id, "d1"): ("no",), (q.id, "d2"): ("fail",)})
    stats = StepStats("t")
    [decision], _ = judge_token_candidates([q], cands, store, judge, 2, WINDOWS, stats)
    assert decision.label == "undetermined"
    assert "d2: server_error: 503" in decision.reason
    assert stats.errors["judgment_server_error"] == 1


def test_k1_smaller_than_the_hits_judges_only_k1() -> None:
    q = question(0)
    ids = [f"d{i}" for i in range(6)]
    cands = {q.id: candidates(q.id, ids)}
    store = Store([Document(d, f"{KW} left {ALIAS}. Then more.") for d in ids])
    judge = TableJudge({(q.id, d): ("no",) for d in ids[:5]} | {(q.id, "d5"): ("yes",)})
    stats = StepStats("t")
    [decision], _ = judge_token_candidates([q], cands, store, judge, 2, WINDOWS, stats)
    assert decision.label == "discarded"
    assert decision.judged == 2
    assert "all 2 judged documents irrelevant, 6 matched" in decision.reason
    assert store.asked == [["d0"], ["d1"]]
    assert judge.judged_documents() == {(q.id, "d0"), (q.id, "d1")}


def test_early_exit_stops_at_the_first_yes() -> None:
    qa, qb = question(0), question(1)
    cands = {qa.id: candidates(qa.id, ["d1", "d2", "d3"]), qb.id: candidates(qb.id, ["d1", "d3"])}
    store = Store([Document(d, f"Text of {d}.") for d in ("d1", "d2", "d3")])
    table = {(qa.id, "d1"): ("yes",), (qb.id, "d1"): ("no",), (qb.id, "d3"): ("no",)}
    judge = TableJudge(table)
    decisions, _ = judge_token_candidates(
        [qa, qb], cands, store, judge, 10, WINDOWS, StepStats("t")
    )
    assert [(d.label, d.judged) for d in decisions] == [("answerable", 1), ("to_vector", 2)]
    assert store.asked == [["d1"], ["d3"]]
    assert "all 2 matching documents judged irrelevant" in decisions[1].reason


def test_no_candidates_go_to_vector_without_judging() -> None:
    q = question(0)
    judge = TableJudge({})
    [decision], judgments = judge_token_candidates(
        [q], {q.id: candidates(q.id, [])}, Store([]), judge, 5, WINDOWS, StepStats("t")
    )
    assert (decision.label, decision.judged, decision.total_matches) == ("to_vector", 0, 0)
    assert "no document contains" in decision.reason
    assert judgments == [] and judge.calls == []


def test_search_tokens_keeps_k1_hits_and_the_total(tmp_path: Path) -> None:
    index = TantivyTokenIndex.at(tmp_path / "token", heap_mb=64, threads=1)
    index.build(
        [
            Document("a", f"{KW} was born in {ALIAS}. {KW} again."),
            Document("b", f"{KW} visited {ALIAS}."),
            Document("c", f"{KW} and {ALIAS} and {ALIAS} and {KW} and {KW}."),
            Document("d", f"{KW} only."),
        ]
    )
    qa, qb = question(0), Question("q1", "Where is Orla Venn?", "x", ["Nowhere"])
    keywords = {qa.id: Keywords(qa.id, [KW]), qb.id: Keywords(qb.id, ["Orla Venn"])}
    stats = StepStats("t")
    found = search_tokens([qa, qb], keywords, index, 2, stats)
    assert found[0] == TokenCandidates(qa.id, [KW], 3, [TokenHit("c", 5.0), TokenHit("a", 3.0)])
    assert found[1] == TokenCandidates(qb.id, ["Orla Venn"], 0, [])
    assert stats.counts == {
        "questions": 2, "hits_returned": 2, "over_k1": 1, "within_k1": 1, "no_match": 1,
    }  # fmt: skip


def test_judgments_keep_the_offsets_of_their_windows() -> None:
    from tipqa.llm.judges.rules import RuleJudge

    q = question(0)
    text = "Filler words.\n\nKellan Dusk was born in Varnholt.\n\nMore filler."
    store = Store([Document("d0", text)])
    _, judgments = judge_token_candidates(
        [q], {q.id: candidates(q.id, ["d0"])}, store, RuleJudge(), 10, WINDOWS, StepStats("t")
    )
    assert [(j.label, text[j.start : j.end]) for j in judgments] == [
        ("yes", "Kellan Dusk was born in Varnholt.")
    ]
