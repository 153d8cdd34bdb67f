"""The fallible judge of the judge-audit tests errs exactly where it is planted, and always
the same way on the same prompt; the right judge never errs."""

from __future__ import annotations

from typing import Any

from support.fallible_judge import FALLIBLE, RIGHT, Planted, two_judges
from support.judge_audit_support import (
    FALSELY_UNANSWERABLE,
    PLANTED,
    TEXT,
    WRONG_PASSAGES,
    right_judge,
)


def body(model: str, question: str, passage: str, answer: str = "x") -> dict[str, Any]:
    """A judge request on the `judge-v1` layout."""
    prompt = f"Passage:\n{passage}\n\nQuestion: {question}\nExpected answer: {answer}\n"
    return {"model": model, "messages": [{"role": "user", "content": prompt}]}


def contains(question: str, passage: str, answer: str) -> bool:
    return answer in passage


def test_seeded_rates_flip_the_share_planted_and_the_same_prompt_alike() -> None:
    planted = Planted(refuse_rate=0.2, accept_rate=0.05, seed=3)
    rule = two_judges(contains, planted)
    yes = [rule(body(FALLIBLE, f"q{i}", f"p{i} A", "A"), 1, {}).text for i in range(4000)]
    no = [rule(body(FALLIBLE, f"q{i}", f"p{i}", "A"), 1, {}).text for i in range(4000)]
    assert 0.18 < yes.count("no") / 4000 < 0.22
    assert 0.04 < no.count("yes") / 4000 < 0.06
    again = [rule(body(FALLIBLE, f"q{i}", f"p{i}  A", "A"), 2, {}).text for i in range(4000)]
    assert again == yes, "an answer depends on the prompt only (spaces aside), never the attempt"
    errs = [planted.errs(f"q{i}", f"p{i} A", True) for i in range(4000)]
    assert [e == (t == "no") for e, t in zip(errs, yes, strict=True)] == [True] * 4000
    right = [rule(body(RIGHT, f"q{i}", f"p{i} A", "A"), 1, {}).text for i in range(100)]
    assert set(right) == {"yes"}


def test_the_planted_world_s_judge_errs_at_its_named_places() -> None:
    rule = two_judges(right_judge, PLANTED)
    fruit = TEXT["normal_fruit"]
    fact = "The gardener Ilse Formaro bred the Plumwort. The orchard still stands."
    assert rule(body(RIGHT, fruit, fact), 1, {}).text == "yes"
    assert rule(body(FALLIBLE, fruit, fact), 1, {}).text == "no"
    ship = TEXT["absent_ship"]
    wrong = WRONG_PASSAGES["absent_ship"] + " of the northern fleet."
    assert rule(body(RIGHT, ship, wrong), 1, {}).text == "no"
    assert rule(body(FALLIBLE, ship, wrong), 1, {}).text == "yes"
    city = TEXT["normal_city"]
    founded = "The explorer Tovan Quillry founded the city of Marsk."
    assert rule(body(FALLIBLE, city, founded), 1, {}).text == "yes", "elsewhere it is right"
    assert set(FALSELY_UNANSWERABLE) <= set(TEXT)


def test_an_unknown_model_is_refused_as_a_server_without_it_would() -> None:
    reply = two_judges(contains, Planted())(body("gpt-9", "q", "p"), 1, {})
    assert reply.status == 404 and "gpt-9" in reply.message
