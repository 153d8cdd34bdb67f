"""The judge audit's parts: a question closes at its first dispute or its budget, a failed
judgment is undetermined and never a "no", and the figures are the exact ones."""

from __future__ import annotations

from tipqa.audit.figures import clopper_pearson
from tipqa.audit.judge_audit import Rejudged, Unit, agreement, label_block, request
from tipqa.core.records import JudgeRequest, Judgment, LabeledQuestion
from tipqa.core.stats import StepStats
from tipqa.stages.judging import judge_in_rounds


def row(qid: str, label: str, stage: str = "vector") -> LabeledQuestion:
    return LabeledQuestion(qid, "Q?", "A", ["A"], label, stage, "why", ["Q"], None, None)  # type: ignore[arg-type]


def unit(item: LabeledQuestion, index: int, first: str | None = "no") -> Unit:
    return Unit(request(item, "token", f"d{index}", f"d{index}@w0", f"text {index}"), first)


def answer(request: JudgeRequest, label: str | None) -> Judgment:
    error = None if label else "connection: refused"
    return Judgment.of(request, label=label, raw=label or "", judge="second", error=error)  # type: ignore[arg-type]


class Scripted:
    """A second judge answering each request by the label scripted for its unit."""

    name = "second"

    def __init__(self, labels: dict[str, str | None]) -> None:
        self.labels = labels
        self.asked: list[str] = []

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        self.asked += [r.unit_id for r in requests]
        return [answer(r, self.labels[r.unit_id]) for r in requests]


def test_a_question_closes_at_its_first_dispute_or_its_budget() -> None:
    stats = StepStats("audit")
    item = row("q", "unanswerable")
    disputed = Rejudged(item, [unit(item, i) for i in range(5)], budget=3)
    capped = Rejudged(row("c", "unanswerable"), [unit(item, i) for i in range(5)], budget=3)
    capped.units = [Unit(request(capped.row, "vector", "e", f"e{i}", "t"), "no") for i in range(5)]
    labels = {"d0@w0": "no", "d1@w0": "yes", **{f"e{i}": "no" for i in range(5)}}
    judge = Scripted(labels)
    judge_in_rounds([disputed, capped], None, judge, stats)
    assert disputed.disputed is disputed.units[1] and disputed.pairs == [
        ("no", "no"),
        ("no", "yes"),
    ]
    assert judge.asked == ["d0@w0", "e0", "d1@w0", "e1", "e2"], "one unit each a round"
    assert not capped.open and capped.disputed is None and not capped.undetermined
    assert stats.counts["prompts"] == 5


def test_a_failed_judgment_is_undetermined_and_left_out_of_the_rate() -> None:
    stats = StepStats("audit")
    items = []
    labels: dict[str, str | None] = {}
    for i, said in enumerate(["no", "yes", None, "yes"]):
        item = row(f"q{i}", "answerable")
        items.append(Rejudged(item, [unit(item, i, first="yes")], budget=20))
        labels[f"d{i}@w0"] = said
    judge_in_rounds(items, None, Scripted(labels), stats)
    block = label_block(10, items)
    assert block["failed"] == 1 and block["audited"] == 4
    assert [d["id"] for d in block["disputed"]] == ["q0"]
    assert block["rate"] == 1 / 3 and block["ci95"] == clopper_pearson(1, 3)
    assert stats.errors == {"judgment_connection": 1}


def test_kappa_is_cohens_over_the_units_with_a_bootstrap_interval() -> None:
    pairs = [("yes", "yes")] * 3 + [("yes", "no")] + [("no", "no")] * 4 + [("no", "yes")] * 2
    found = agreement(pairs, seed=0)
    assert found["units"] == 10 and found["observed"] == 0.7
    assert abs(found["kappa"] - 0.4) < 1e-12, "(0.7 - 0.5) / (1 - 0.5) by hand"
    low, high = found["ci95"]
    assert -1 <= low < 0.4 < high <= 1
    assert agreement([], seed=0) == {"units": 0, "observed": None, "kappa": None, "ci95": None}
