"""The splits with the audit applied and the verbatim counts read: labels, relevance, funnel."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.partition_fixtures import DEV, write_pool

from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records, write_json, write_records
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import (
    AuditEvidence,
    AuditFinding,
    JudgedUnit,
    Judgment,
    LabeledQuestion,
    Verbatim,
)
from tipqa.core.steps import Step
from tipqa.dataset.qrels import QRELS_FILE, UNITS_FILE, read_qrels
from tipqa.dataset.splits import AUDIT_SCHEMA_VERSION, SplitPlan, make_splits
from tipqa.report.build import pool_funnel, split_funnel

RECORD = StepRecord(Step.SPLITS, {})
SETTINGS = {"sample": 0.5, "seed": 0, "budget": 20, "apply": True}


def audited(run: RunLayout, findings: list[AuditFinding]) -> None:
    """The pool's audit files: `audit.json` with these findings, and its judgments."""
    pool = run.pool("dev")
    found = [finding.to_dict() for finding in findings]
    audit = {"fingerprint": "f", "settings": {"audit": SETTINGS}, "found": found}
    write_json(pool.audit, {"schema_version": AUDIT_SCHEMA_VERSION, **audit})
    judgments = [
        Judgment(f.id, "audit", f.evidence.doc_id, f.evidence.unit_id, "yes", "yes", "perfect")
        for f in findings
    ]
    no = Judgment(findings[0].id, "audit", "d9", "d9@w0", "no", "no", "perfect")
    write_records(pool.audit_judgments, [*judgments, no])


def finding(row: LabeledQuestion, doc_id: str) -> AuditFinding:
    evidence = AuditEvidence(doc_id, f"{doc_id}@w0", "The fact.", 3, 12, "keywords without x")
    return AuditFinding(row.id, row.label, "keywords_minus_one", evidence)


@pytest.fixture
def run(tmp_path: Path) -> tuple[RunLayout, dict[str, list[LabeledQuestion]]]:
    """A dev pool with relevance files, verbatim counts and an audit of two findings."""
    run = RunLayout(tmp_path)
    rows = write_pool(run, "dev", DEV)
    partition = run.pool("dev").partition
    unanswerable, discarded = rows["unanswerable"][0], rows["discarded"][1]
    (partition / QRELS_FILE).write_text(f"{unanswerable.id} 0 d1 0\n")
    unit = JudgedUnit(unanswerable.id, "vector", "d1", "d1#0", 0, None, "perfect")
    write_records(partition / UNITS_FILE, [unit])
    everyone = [row for items in rows.values() for row in items]
    write_records(
        run.pool("dev").verbatim, [Verbatim(r.id, i % 3, i % 2) for i, r in enumerate(everyone)]
    )
    audited(run, [finding(unanswerable, "d1"), finding(discarded, "d5")])
    return run, rows


def test_found_questions_move_to_answerable_with_the_audit_s_evidence(run: tuple) -> None:
    layout, rows = run
    stats = make_splits(layout, SplitPlan("dev", None, 0, 0, True, True), RECORD)
    test = {
        r.id: r
        for r in read_records(SplitsLayout(layout.splits).questions("test"), LabeledQuestion)
    }
    unanswerable, discarded = rows["unanswerable"][0], rows["discarded"][1]
    for row, doc in ((unanswerable, "d1"), (discarded, "d5")):
        moved = test[row.id]
        assert (moved.label, moved.stage) == ("answerable", "audit")
        assert moved.evidence is not None and moved.evidence.stage == "audit"
        assert moved.evidence.doc_id == doc and moved.reason.startswith(f"was {row.label}")
    assert rows["discarded"][0].id not in test, "a discarded question not found stays out"
    assert len(test) == DEV["answerable"] + DEV["unanswerable"] + 1
    assert all(row.verbatim_docs is not None for row in test.values())
    info = stats.info
    assert info["pools"]["dev"]["audit_moved"] == {"unanswerable": 1, "discarded": 1}
    assert info["splits"]["test"]["by_stage"]["answerable_audit"] == 2
    assert info["audit"]["dev"] == {
        "fingerprint": "f", "settings": SETTINGS, "moved": {"unanswerable": 1, "discarded": 1},
    }  # fmt: skip
    verbatim = info["verbatim"]["test"]
    assert sum(v["questions"] for v in verbatim.values()) == len(test)
    qrels = read_qrels(layout.splits / "test" / QRELS_FILE)
    assert qrels[unanswerable.id] == {"d1": 1, "d9": 0} and qrels[discarded.id] == {"d5": 1}
    units = read_records(layout.splits / "test" / UNITS_FILE, JudgedUnit)
    assert [u.stage for u in units] == ["vector", "audit", "audit", "audit"]


def test_the_funnel_counts_the_moved_questions_once(run: tuple) -> None:
    layout, rows = run
    make_splits(layout, SplitPlan("dev", None, 0, 0, True, True), RECORD)
    info = read_json(layout.splits_stats)["info"]
    funnel = pool_funnel(info["pools"]["dev"])
    everyone = [row for items in rows.values() for row in items]
    assert funnel["to_vector"] == sum(row.stage == "vector" for row in everyone)
    assert funnel["answerable_audit"] == 2 and funnel["discarded_token"] == DEV["discarded"] - 1
    assert split_funnel(info["splits"]["test"])["answerable_audit"] == 2


def test_without_apply_the_labels_stay_algorithm_1_s(run: tuple) -> None:
    layout, rows = run
    stats = make_splits(layout, SplitPlan("dev", None, 0, 0, verbatim=False), RECORD)
    test = read_records(SplitsLayout(layout.splits).questions("test"), LabeledQuestion)
    assert {(r.id, r.label) for r in test} == {
        (r.id, r.label) for label in ("answerable", "unanswerable") for r in rows[label]
    }
    assert all(r.verbatim_docs is None for r in test)
    assert "audit" not in stats.info and "verbatim" not in stats.info
    assert read_qrels(layout.splits / "test" / QRELS_FILE) == {
        rows["unanswerable"][0].id: {"d1": 0}
    }
