"""The one judging engine: rounds over open items, and the confirming judge of every yes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tipqa.core.errors import UnreachableError
from tipqa.core.records import (
    Document,
    JudgeRequest,
    Judgment,
    Keywords,
    Question,
    TokenCandidates,
    TokenHit,
    VectorCandidates,
    VectorHit,
)
from tipqa.core.stats import StepStats
from tipqa.stages.judging import Judges
from tipqa.stages.token import judge_token_candidates
from tipqa.stages.vector import judge_vector_candidates
from tipqa.stages.windows import WindowSettings

QUESTION = Question("q", "Where was Kellan Dusk born?", "Varnholt", ["Varnholt"])
DOCUMENTS = {
    f"d{i}": Document(f"d{i}", f"Kellan Dusk was born in Varnholt, says text {i}.")
    for i in range(4)
}


@dataclass
class DocumentJudge:
    """A judge that answers by document: `verdicts[doc_id]` ("yes", "no", or an error kind)."""

    verdicts: dict[str, str]
    name: str = "first"
    asked: list[JudgeRequest] = field(default_factory=list)

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        self.asked += requests
        out = []
        for request in requests:
            verdict = self.verdicts.get(request.doc_id, "no")
            label = verdict if verdict in ("yes", "no") else None
            error = None if label else verdict
            out.append(Judgment.of(request, label=label, raw=verdict, judge=self.name, error=error))
        return out


def token_run(first: DocumentJudge, confirm: DocumentJudge | None, stats: StepStats):
    hits = [TokenHit(doc_id, 1.0) for doc_id in DOCUMENTS]
    candidates = {"q": TokenCandidates("q", ["Kellan Dusk"], len(hits), hits)}
    return judge_token_candidates(
        [QUESTION],
        candidates,
        lambda ids: {i: DOCUMENTS[i] for i in ids},
        Judges(first, confirm),
        4,
        WindowSettings(),
        stats,
    )


def test_a_refuted_yes_is_no_evidence_and_judging_goes_on() -> None:
    first = DocumentJudge({"d0": "no", "d1": "yes", "d2": "yes", "d3": "yes"})
    confirm = DocumentJudge({"d1": "no", "d2": "yes"}, name="second")
    stats = StepStats("token_judge")
    [decision], judgments = token_run(first, confirm, stats)
    assert decision.label == "answerable" and decision.evidence is not None
    assert decision.evidence.doc_id == "d2"
    assert decision.evidence.confirmation is not None
    assert decision.evidence.confirmation.judge == "second"
    assert [r.doc_id for r in confirm.asked] == ["d1", "d2"], "once per yes of the first judge"
    assert [r.doc_id for r in first.asked] == ["d0", "d1", "d2"], "early exit at a confirmed yes"
    by_doc = {j.doc_id: j for j in judgments}
    assert by_doc["d1"].label == "yes" and by_doc["d1"].verdict == "no"
    assert by_doc["d0"].confirmation is None, "a no is not asked again"
    assert stats.counts["confirmation_prompts"] == 2 == stats.counts["prompts"] - 1
    assert (stats.counts["confirmation_yes"], stats.counts["confirmation_no"]) == (1, 1)


def test_without_a_confirming_judge_judgments_read_and_write_as_before() -> None:
    first = DocumentJudge({"d1": "yes"})
    [decision], judgments = token_run(first, None, StepStats("token_judge"))
    assert decision.evidence is not None and decision.evidence.doc_id == "d1"
    assert "confirmation" not in judgments[1].to_dict()
    assert "confirmation" not in decision.to_dict()["evidence"]
    assert Judgment.from_dict(judgments[1].to_dict()) == judgments[1]


def test_a_failed_confirmation_is_never_a_no() -> None:
    first = DocumentJudge({"d0": "yes"})
    confirm = DocumentJudge({"d0": "http_500"}, name="second")
    stats = StepStats("token_judge")
    [decision], judgments = token_run(first, confirm, stats)
    assert decision.label == "undetermined"
    assert "confirmation: http_500" in decision.reason
    assert stats.errors["confirmation_http_500"] == 1 and not stats.errors["judgment_http_500"]
    written = Judgment.from_dict(judgments[0].to_dict())
    assert written.confirmation is not None and written.failed


def test_the_vector_stage_counts_a_chunk_only_where_both_judges_say_yes() -> None:
    hits = [VectorHit(f"c{i}", f"d{i}", 0.5, DOCUMENTS[f"d{i}"].text) for i in range(3)]
    candidates = {"q": VectorCandidates("q", hits)}
    first = DocumentJudge({"d0": "yes", "d1": "yes"})
    confirm = DocumentJudge({"d0": "no", "d1": "yes"}, name="second")
    keywords = {"q": Keywords("q", ["Kellan Dusk"])}
    [decision], _, instances = judge_vector_candidates(
        [QUESTION], candidates, keywords, Judges(first, confirm), StepStats("vector_judge")
    )
    assert decision.evidence is not None and decision.evidence.unit_id == "c1"
    assert [i.relevant for i in instances] == [False, True, False]
    assert [i.confirmation.label if i.confirmation else None for i in instances] == [
        "no",
        "yes",
        None,
    ]
    assert len(confirm.asked) == 2


def test_an_unreachable_confirming_judge_stops_naming_its_section() -> None:
    first = DocumentJudge({"d0": "yes"})
    confirm = DocumentJudge({"d0": "connection"}, name="openai:big")
    with pytest.raises(UnreachableError) as error:
        token_run(first, confirm, StepStats("token_judge"))
    message = str(error.value)
    assert message.startswith("[judge.confirm] the judge openai:big did not answer (connection)")
    assert "\n" not in message
