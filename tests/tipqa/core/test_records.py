"""Records: dict round trips (nested ones included) and errors naming the missing field."""

from __future__ import annotations

import orjson
import pytest

from tipqa.core import records


def _evidence() -> records.Evidence:
    return records.Evidence("token", "d1", "d1@w0", "Kellan Dusk was born in Varnholt.")


def test_question_round_trip_keeps_default_source() -> None:
    q = records.Question("q1", "In which city was Kellan Dusk born?", "Varnholt", ["Varnholt"])
    data = q.to_dict()
    assert data["source"] == ""
    assert records.Question.from_dict(data) == q
    assert records.Question.from_dict(orjson.loads(orjson.dumps(data))) == q


def test_token_candidates_hits_become_records() -> None:
    tc = records.TokenCandidates(
        "q1", ["Kellan Dusk"], 7, [records.TokenHit("d1", 3.0), records.TokenHit("d2", 1.0)]
    )
    data = orjson.loads(orjson.dumps(tc.to_dict()))
    assert data["hits"][0] == {"doc_id": "d1", "score": 3.0}
    back = records.TokenCandidates.from_dict(data)
    assert back == tc
    assert all(isinstance(h, records.TokenHit) for h in back.hits)


def test_vector_candidates_round_trip() -> None:
    vc = records.VectorCandidates("q1", [records.VectorHit("c1", "d1", 0.9, "text")])
    back = records.VectorCandidates.from_dict(vc.to_dict())
    assert back == vc
    assert isinstance(back.hits[0], records.VectorHit)


@pytest.mark.parametrize("evidence", [None, _evidence()])
def test_decision_evidence_round_trip(evidence: records.Evidence | None) -> None:
    d = records.Decision("q1", "answerable", "token", "why", evidence, total_matches=4, judged=2)
    back = records.Decision.from_dict(orjson.loads(orjson.dumps(d.to_dict())))
    assert back == d
    assert back.evidence is None or isinstance(back.evidence, records.Evidence)


def test_decision_defaults_when_optional_fields_absent() -> None:
    back = records.Decision.from_dict(
        {"question_id": "q", "label": "to_vector", "stage": "token", "reason": "r"}
    )
    assert (back.evidence, back.total_matches, back.judged) == (None, None, 0)


def test_labeled_question_evidence_round_trip() -> None:
    row = records.LabeledQuestion(
        "q1", "Q?", "A", ["A", "a"], "answerable", "token", "r", ["K"], 3, _evidence()
    )
    back = records.LabeledQuestion.from_dict(row.to_dict())
    assert back == row
    assert isinstance(back.evidence, records.Evidence)


def test_judgment_failed_property_and_round_trip() -> None:
    ok = records.Judgment("q", "vector", "d", "c", "yes", "yes", "rules:v1")
    bad = records.Judgment("q", "vector", "d", "c", None, "maybe", "j", error="unparsable")
    assert not ok.failed and bad.failed
    assert records.Judgment.from_dict(bad.to_dict()) == bad


def test_document_meta_is_not_shared_between_instances() -> None:
    a, b = records.Document("a", "x"), records.Document("b", "y")
    a.meta["k"] = 1
    assert b.meta == {}


def test_missing_field_is_named() -> None:
    with pytest.raises(records.RecordError, match=r"Question: missing field 'answer'"):
        records.Question.from_dict({"id": "q", "text": "t", "aliases": []})


def test_missing_field_of_nested_record_is_named() -> None:
    data = {"question_id": "q", "keywords": [], "total": 1, "hits": [{"doc_id": "d"}]}
    with pytest.raises(records.RecordError, match=r"TokenHit: missing field 'score'"):
        records.TokenCandidates.from_dict(data)


@pytest.mark.parametrize("value", [[1, 2], "text", None, 3])
def test_non_dict_input_is_rejected(value: object) -> None:
    with pytest.raises(records.RecordError, match="Keywords: expected an object"):
        records.Keywords.from_dict(value)  # type: ignore[arg-type]


def test_unknown_keys_are_ignored() -> None:
    back = records.Keywords.from_dict({"question_id": "q", "keywords": ["K"], "extra": 1})
    assert back == records.Keywords("q", ["K"])
