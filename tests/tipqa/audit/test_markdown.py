"""The words of the report, card and summary about how far the labels can be trusted."""

from __future__ import annotations

from typing import Any

from tipqa.audit.figures import clopper_pearson, label_figures
from tipqa.audit.markdown import UNMEASURED, summary_line, trust_section
from tipqa.core.records import AuditEvidence, AuditFinding


def audit(found: int = 2, applied: bool = False) -> dict[str, Any]:
    """An audit of 40 unanswerable questions (10 audited) and 3 discarded (1 audited)."""
    evidence = AuditEvidence("d", "d@w0", "t", 0, 1, "r")
    findings = [AuditFinding(f"q{i}", "unanswerable", "alias_only", evidence) for i in range(found)]
    by_label = {
        "unanswerable": label_figures(40, 10, findings),
        "discarded": label_figures(3, 1, []),
    }
    return {
        "settings": {"audit": {"sample": 0.25, "seed": 0, "budget": 20, "apply": applied}},
        "by_label": by_label,
        "found": [f.to_dict() for f in findings],
        "judge_calls": 200,
        "prompt_tokens": 0,
        "build": {"judge_calls": 1000, "prompt_tokens": 0},
        "applied": applied,
    }


AGREEMENT = {
    "items": 700,
    "llm_human": {
        "pairs": 900,
        "agreement": {"value": 82.8, "ci95": [80.1, 85.2]},
        "kappa": {"value": 0.61, "ci95": [0.55, 0.67]},
    },
}


def test_the_section_says_what_was_measured_and_how_to_read_it() -> None:
    verbatim = {"test": {"answerable": {"questions": 5, "in_corpus": 2, "with_alias": 1}}}
    text = trust_section({"dev": audit()}, verbatim, AGREEMENT)
    assert text.startswith("## How far the labels can be trusted")
    assert (
        "The judge agreed with people on 82.8% (bootstrap 95% CI 80.1% to 85.2%) of 900 judged "
        "(document, question) pairs (700 items annotated), Cohen's kappa 0.61." in text
    )
    assert (
        "Of the 40 questions of pool `dev` labelled unanswerable, a seeded random sample of 10"
        in text
    )
    assert "an estimated 20.0% of the label answerable (exact 95% CI 2.5% to 55.6%)" in text
    assert "| dev | unanswerable | 40 | 10 | 2 | 20.0% | 2.5% to 55.6% | alias_only 2 |" in text
    assert "| dev | discarded | 3 | 1 | 0 | 0.0% | 0.0% to 97.5% | - |" in text
    assert "200 judge prompts, 20.0% of the build's 1,000." in text
    assert "the audit reports and changes none of them" in text
    assert "| test | answerable | 5 | 2 | 1 |" in text
    applied = trust_section({"dev": audit(applied=True)}, None)
    assert "are answerable (stage `audit`) in these splits" in applied


def test_nothing_measured_nothing_said() -> None:
    assert trust_section({}, None) == ""
    assert trust_section({}, {}) == ""


def test_the_summary_line() -> None:
    assert summary_line("dev", audit(applied=True)) == (
        "- audit of pool **dev**: 2 of 10 unanswerable with evidence (20.0%, 95% CI 2.5% to "
        "55.6%); 0 of 1 discarded with evidence (0.0%, 95% CI 0.0% to 97.5%), moved to "
        "answerable; 200 judge prompts (20.0% of the build's)"
    )


def test_failed_judgments_are_said_and_left_out_of_the_shares() -> None:
    evidence = AuditEvidence("d", "d@w0", "t", 0, 1, "r")
    findings = [AuditFinding("q0", "unanswerable", "alias_only", evidence)]
    failing = audit()
    failing["by_label"]["unanswerable"] = label_figures(40, 10, findings, failed=6)
    figures = failing["by_label"]["unanswerable"]
    assert figures["rate"] == 0.25 and figures["ci95"] == label_figures(40, 4, findings)["ci95"]
    text = trust_section({"dev": failing}, None)
    assert (
        "6 of them are undetermined (a judgment failed) and left out, and of the other 4 "
        "evidence was found for 1, an estimated 25.0% of the label answerable" in text
    )
    assert "left undetermined (a judgment of the audit failed" in text
    assert "pool `dev`: 6 unanswerable, 0 discarded." in text
    assert summary_line("dev", failing).startswith(
        "- audit of pool **dev**: 1 of 4 unanswerable with evidence (25.0%, 95% CI "
    )
    assert ", 6 undetermined: a judgment failed)" in summary_line("dev", failing)
    nothing = label_figures(3, 2, [], failed=2)
    assert nothing["rate"] is None and nothing["ci95"] is None


def judge_block(labelled: int, audited: int, disputed: int, failed: int = 0) -> dict[str, Any]:
    """One label of a judge audit."""
    settled = audited - failed
    return {
        "labelled": labelled,
        "audited": audited,
        "disputed": [{"id": f"q{i}", "stage": "token", "evidence": {}} for i in range(disputed)],
        "rate": disputed / settled if settled else None,
        "ci95": clopper_pearson(disputed, settled),
        "by_stage": {},
        "failed": failed,
    }


def test_the_judge_audit_stands_beside_the_search_audit() -> None:
    judged = audit()
    judged["settings"]["audit"]["judge_sample"] = 0.1
    judged["judge_audit"] = {
        "judge": {"backend": "openai", "model": "big"},
        "answerable": judge_block(400, 40, 4),
        "unanswerable": judge_block(40, 4, 1),
        "discarded": judge_block(3, 1, 0, failed=1),
        "agreement": {"units": 60, "observed": 0.9, "kappa": 0.71, "ci95": [0.5, 0.85]},
        "judge_calls": 80,
        "prompt_tokens": 0,
    }
    text = trust_section({"dev": judged}, None, AGREEMENT)
    assert "The judge's own errors are not measured" not in text
    assert (
        "A second judge (`openai` model `big`) re-judged a seeded random sample of pool `dev`'s "
        "labels (share 0.1 of each, seed 0) with the build's prompt. Of 40 answerable questions "
        "it rejected the accepted evidence of 4, an estimated 10.0% of the label" in text
    )
    assert "agreed on 90.0% (Cohen's kappa 0.71, bootstrap 95% CI 0.50 to 0.85)" in text
    assert "an error both judges make stays unseen" in text
    assert "| dev | answerable | 400 | not searched | - | 4 of 40 (10.0%) |" in text
    assert "| dev | unanswerable | 40 | 2 of 10 (20.0%) | 2.5% to 55.6% | 1 of 4 (25.0%) |" in text
    assert "| dev | discarded | 3 | 0 of 1 (0.0%) | 0.0% to 97.5% | 0 of 0 | - | 1 |" in text
    assert "Questions left undetermined by the judge audit" in text and "pool `dev`: 1." in text
    line = summary_line("dev", judged).split("\n")[1]
    assert line == (
        "- judge audit of pool **dev** (`openai` model `big`): disputes 4 of 40 answerable; 1 of "
        "4 unanswerable; 0 of 0 discarded, 1 undetermined; 80 prompts (8.0% of the build's)"
    )


def test_without_a_second_judge_the_section_says_how_to_measure_the_judge() -> None:
    text = trust_section({"dev": audit()}, None)
    assert UNMEASURED in text and "[audit.judge]" in UNMEASURED


def test_each_judge_s_agreement_with_people_side_by_side() -> None:
    second = {
        "judge": "big",
        "pairs": 880,
        "agreement": {"value": 90.5, "ci95": [88.0, 92.6]},
        "kappa": {"value": 0.8, "ci95": [0.7, 0.86]},
        "failed": 2,
    }
    text = trust_section({}, None, {**AGREEMENT, "second_judge": second})
    assert "The judge agreed with people on 82.8%" in text
    assert (
        "The second judge (`big`, `[audit.judge]`) agreed with people on 90.5% (bootstrap 95% CI "
        "88.0% to 92.6%) of the same items' 880 pairs; 2 items whose judgment failed left out, "
        "Cohen's kappa 0.80." in text
    )
