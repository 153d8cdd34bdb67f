"""The judge audit's parts: a question closes at its first dispute or its budget, a failed
judgment is undetermined and never a "no", and the figures are the exact ones."""

from __future__ import annotations

from tipqa.audit.figures import clopper_pearson
from tipqa.audit.judge_audit import Rejudged, Unit, agreement, label_block, request
from tipqa.core.records import Judgment, LabeledQuestion
from tipqa.core.stats import StepStats


def row(qid: str, label: str, stage: str = "vector") -> LabeledQuestion:
    return LabeledQuestion(qid, "Q?", "A", ["A"], label, stage, "why", ["Q"], None, None)  # type: ignore[arg-type]


def unit(item: LabeledQuestion, index: int, first: str | None = "no") -> Unit:
    return Unit(request(item, "token", f"d{index}", f"d{index}@w0", f"text {index}"), first)


def answer(unit: Unit, label: str | None) -> Judgment:
    error = None if label else "connection: refused"
    return Judgment.of(unit.request, label=label, raw=label or "", judge="second", error=error)  # type: ignore[arg-type]


def test_a_question_closes_at_its_first_dispute_or_its_budget() -> None:
    stats = StepStats("audit")
    item = row("q", "unanswerable")
    rejudged = Rejudged(item, [unit(item, i) for i in range(5)], budget=3)
    taken = [rejudged.take() for _ in range(2)]
    rejudged.record(taken[0], answer(taken[0], "no"), stats)
    rejudged.record(taken[1], answer(taken[1], "yes"), stats)
    assert not rejudged.open and rejudged.disputed is taken[1]
    assert rejudged.pairs == [("no", "no"), ("no", "yes")]
    capped = Rejudged(item, [unit(item, i) for i in range(5)], budget=3)
    for _ in range(3):
        capped.record(capped.units[capped.next], answer(capped.take(), "no"), stats)
    assert not capped.open and capped.disputed is None and not capped.undetermined


def test_a_failed_judgment_is_undetermined_and_left_out_of_the_rate() -> None:
    stats = StepStats("audit")
    items = []
    for i, said in enumerate(["no", "yes", None, "yes"]):
        item = row(f"q{i}", "answerable")
        rejudged = Rejudged(item, [unit(item, i, first="yes")], budget=20)
        rejudged.record(rejudged.units[0], answer(rejudged.take(), said), stats)
        items.append(rejudged)
    block = label_block(10, items)
    assert block["failed"] == 1 and block["audited"] == 4
    assert [d["id"] for d in block["disputed"]] == ["q0"]
    assert block["rate"] == 1 / 3 and block["ci95"] == clopper_pearson(1, 3)
    assert stats.errors == {"judge_audit.judgment_connection": 1}


def test_kappa_is_cohens_over_the_units_with_a_bootstrap_interval() -> None:
    pairs = [("yes", "yes")] * 3 + [("yes", "no")] + [("no", "no")] * 4 + [("no", "yes")] * 2
    found = agreement(pairs, seed=0)
    assert found["units"] == 10 and found["observed"] == 0.7
    assert abs(found["kappa"] - 0.4) < 1e-12, "(0.7 - 0.5) / (1 - 0.5) by hand"
    low, high = found["ci95"]
    assert -1 <= low < 0.4 < high <= 1
    assert agreement([], seed=0) == {"units": 0, "observed": None, "kappa": None, "ci95": None}
