"""The offline judge: keywords and an alias stated in one sentence."""

from __future__ import annotations

import functools

import pytest
from support.judge_support import judge_request

from tipqa.llm.judges.base import JUDGES
from tipqa.llm.judges.rules import RuleJudge, is_relevant

request = functools.partial(
    judge_request,
    question="In which city was Kellan Dusk born?",
    answer="Varnholt",
    aliases=["Varnholt", "City of Varnholt"],
    keywords=["Kellan Dusk"],
    unit="d{index}@w0",
)


@pytest.mark.parametrize(
    "text",
    [
        "Kellan Dusk was born in Varnholt.",
        "Filler first. Dusk, Kellan was born in the city of Varnholt. Filler after.",
        "Barley grows here.\n\nIn Varnholt, a boy named Kellan Dusk was born.",
    ],
)
def test_yes_when_one_sentence_has_keyword_tokens_and_an_alias(text: str) -> None:
    assert is_relevant(request(text))


@pytest.mark.parametrize(
    "text",
    [
        "Kellan Dusk was a famous figure. He travelled a lot. Varnholt is a city.",
        "Kellan Dusk was a famous figure.\n\nVarnholt is a city.",
        "Kellan was born in Varnholt.",
        "Kellan Dusk was born in Varn holt.",
        "",
    ],
)
def test_no_when_keywords_and_alias_are_apart_or_incomplete(text: str) -> None:
    assert not is_relevant(request(text))


def test_every_keyword_is_needed() -> None:
    keywords = ["The Glass Orchard", "1961"]
    req = request("The Glass Orchard was written by Varnholt.", keywords=keywords)
    assert not is_relevant(req)
    req = request("In 1961 The Glass Orchard was written by Varnholt.", keywords=keywords)
    assert is_relevant(req)


def test_no_keyword_fallback_needs_half_the_question_content_words() -> None:
    question = "Which river flows through Varnholt harbour town?"
    # content words: river, flows, through, varnholt, harbour, town (6); 3 are enough

    def judged(text: str) -> bool:
        return is_relevant(request(text, keywords=[], question=question))

    assert judged("The Isk river flows through Varnholt.")
    assert judged("Varnholt is a quiet river town.")
    assert not judged("Varnholt is a quiet town.")
    assert not judged("The river flows through the town. Varnholt is far.")


def test_keywords_without_tokens_use_the_fallback() -> None:
    req = request("Kellan Dusk was born in Varnholt.", keywords=["--"])
    assert is_relevant(req)
    assert not is_relevant(request("Varnholt.", keywords=["--"]))


def test_no_alias_tokens_is_never_relevant() -> None:
    assert not is_relevant(request("Kellan Dusk was born in Varnholt.", aliases=["?!"]))


def test_judge_labels_in_order_with_raw_equal_to_label() -> None:
    judge = JUDGES.create("rules")
    assert isinstance(judge, RuleJudge)
    requests = [
        request("Kellan Dusk was born in Varnholt.", index=0),
        request("Kellan Dusk left. Varnholt stayed.", index=1),
    ]
    judgments = judge.judge(requests)
    assert [j.label for j in judgments] == ["yes", "no"]
    assert [j.raw for j in judgments] == ["yes", "no"]
    assert [(j.question_id, j.doc_id, j.unit_id) for j in judgments] == [
        ("q0", "d0", "d0@w0"),
        ("q1", "d1", "d1@w0"),
    ]
    assert all(j.judge == "rules:v1" and j.stage == "token" and not j.failed for j in judgments)
    assert judge.judge([]) == []
