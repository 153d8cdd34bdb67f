"""Reading chat completions in each layout that OpenAI-compatible servers document."""

from __future__ import annotations

import math

import pytest

from tipqa.llm.chat_response import (
    ChatReply,
    UnreadableResponse,
    read_logprobs,
    read_reply,
    read_token_logprobs,
)

USAGE = {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}


def response(choice: dict, **top: object) -> dict:
    return {"id": "c1", "object": "chat.completion", "choices": [choice], **top}


def answer(content: object = "yes", **fields: object) -> dict:
    return {"index": 0, "message": {"role": "assistant", "content": content}, **fields}


def test_chat_layout() -> None:
    logprobs = {
        "content": [
            {
                "token": "yes",
                "logprob": -0.2,
                "bytes": [121, 101, 115],
                "top_logprobs": [
                    {"token": "yes", "logprob": -0.2, "bytes": None},
                    {"token": " No", "logprob": -1.8, "bytes": None},
                ],
            }
        ],
        "refusal": None,
    }
    reply = read_reply(response(answer(logprobs=logprobs, finish_reason="stop"), usage=USAGE))
    expected = ChatReply("yes", [[("yes", -0.2), (" No", -1.8)]], (12, 1), "stop", False, [-0.2])
    assert reply == expected


def test_probabilities_instead_of_logprobs() -> None:
    content = [{"token": "no", "prob": 0.75, "top_probs": [{"token": "no", "prob": 0.75}]}]
    reply = read_reply(response(answer("no", logprobs={"content": content})))
    assert reply.top_logprobs == [[("no", pytest.approx(math.log(0.75)))]]
    assert reply.token_logprobs == [pytest.approx(math.log(0.75))]


def test_older_completions_layout() -> None:
    logprobs = {
        "tokens": ["Yes", "."],
        "token_logprobs": [-0.1, -0.3],
        "top_logprobs": [{"Yes": -0.1, "No": -2.4}, None, {".": -0.3}],
        "text_offset": [0, 3],
    }
    reply = read_reply(response(answer("Yes.", logprobs=logprobs)))
    assert reply.top_logprobs == [[("Yes", -0.1), ("No", -2.4)], [], [(".", -0.3)]]
    assert reply.token_logprobs == [-0.1, -0.3]


@pytest.mark.parametrize(
    "logprobs", [None, {}, {"content": None}, {"content": None, "refusal": None}, "yes", 3]
)
def test_no_logprobs(logprobs: object) -> None:
    assert read_logprobs(logprobs) == []
    assert read_reply(response(answer(logprobs=logprobs))).top_logprobs == []
    assert read_token_logprobs(logprobs) is None
    assert read_reply(response(answer(logprobs=logprobs))).token_logprobs is None


def test_chosen_tokens_of_a_longer_answer() -> None:
    content = [
        {"token": "William", "logprob": -0.1, "top_logprobs": []},
        {"token": " Shakespeare", "logprob": -0.05, "top_logprobs": []},
    ]
    assert read_token_logprobs({"content": content}) == [-0.1, -0.05]
    assert read_token_logprobs({"content": [{"token": "x", "prob": 0.5}]}) == [
        pytest.approx(math.log(0.5))
    ]


@pytest.mark.parametrize(
    "logprobs",
    [
        {"content": []},
        {"content": [{"token": "a", "logprob": -0.1}, {"token": "b"}]},
        {"content": [{"token": "a", "logprob": -0.1}, "b"]},
        {"content": [{"token": "a", "logprob": float("nan")}]},
        {"content": [{"token": "a", "logprob": True}]},
        {"content": [{"token": "a", "prob": 0.0}]},
        {"tokens": ["a", "b"], "token_logprobs": [-0.1, None]},
        {"tokens": ["a"], "token_logprobs": "-0.1"},
        {"tokens": [], "token_logprobs": []},
    ],
)
def test_chosen_tokens_need_a_logprob_at_every_position(logprobs: object) -> None:
    assert read_token_logprobs(logprobs) is None


def test_odd_entries_are_left_out() -> None:
    position = {
        "token": "yes",
        "logprob": 0.0,
        "top_logprobs": [
            {"token": "yes", "logprob": float("nan")},
            {"token": 5, "logprob": -1.0},
            {"token": "no", "logprob": True},
            "no",
            {"token": "no", "logprob": -9999.0},
        ],
    }
    assert read_logprobs({"content": [position, "junk"]}) == [[("no", -9999.0)]]
    zero = {"top_probs": [{"token": "no", "prob": 0.0}, {"token": "yes", "prob": 1.5}]}
    assert read_logprobs({"content": [zero]}) == [[]]
    assert read_logprobs({"top_logprobs": [{"yes": "high"}, {"no": -1}]}) == [[], [("no", -1.0)]]


@pytest.mark.parametrize(
    "usage",
    [
        None,
        {},
        {"prompt_tokens": 3},
        {"prompt_tokens": 3, "completion_tokens": None},
        {"prompt_tokens": -1, "completion_tokens": 1},
        {"prompt_tokens": True, "completion_tokens": 1},
        "12",
    ],
)
def test_usage_missing_or_unreadable_is_none(usage: object) -> None:
    assert read_reply(response(answer(), usage=usage)).usage is None
    assert read_reply(response(answer())).usage is None


def test_zero_prompt_tokens_are_a_count() -> None:
    usage = {"prompt_tokens": 0, "completion_tokens": 1}
    assert read_reply(response(answer(), usage=usage)).usage == (0, 1)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_without_an_answer(field: str) -> None:
    choice = {"message": {"content": "", field: "Let me think"}, "finish_reason": "length"}
    reply = read_reply(response(choice))
    assert reply.text == "" and reply.reasoned_only and reply.finish_reason == "length"
    choice["message"]["content"] = "no"
    assert not read_reply(response(choice)).reasoned_only


@pytest.mark.parametrize("content", [None, 7, ["yes"]])
def test_content_that_is_not_text_reads_as_empty(content: object) -> None:
    assert read_reply(response(answer(content))).text == ""


@pytest.mark.parametrize(
    "payload",
    [[], "yes", {}, {"choices": []}, {"choices": None}, {"choices": ["yes"]}, {"error": "x"}],
)
def test_no_choice_is_unreadable(payload: object) -> None:
    with pytest.raises(UnreadableResponse):
        read_reply(payload)
