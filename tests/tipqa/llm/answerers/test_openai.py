"""The OpenAI-compatible answerer against a real local server that answers from a table."""

from __future__ import annotations

import math

import pytest
from support.evaluate_support import table_rule
from support.openai_server import FakeOpenAIServer

from tipqa.core.errors import ConfigError
from tipqa.llm.answerers.base import sequence_probability
from tipqa.llm.answerers.openai import OpenAIAnswerer, OpenAIAnswererSettings
from tipqa.llm.prompts import load_template

pytestmark = pytest.mark.needs("openai")

TABLE = {
    "What is the capital of France?": ("Paris", [math.log(0.8)]),
    "Who wrote Hamlet?": ("William Shakespeare", [math.log(0.9), math.log(0.5)]),
    "Which river is longest?": ("The Nile", None),
}


def settings(server: FakeOpenAIServer, **changes) -> OpenAIAnswererSettings:
    return OpenAIAnswererSettings(model="table", base_url=server.base_url, max_retries=0, **changes)


def test_answers_and_confidences_from_token_logprobs() -> None:
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        answerer = OpenAIAnswerer(settings(server), progress=False)
        answers = answerer.answer([*TABLE, "Who painted the ceiling?"])
    assert [a.text for a in answers] == ["Paris", "William Shakespeare", "The Nile", "I don't know"]
    assert answers[0].confidence == pytest.approx(0.8)
    assert answers[1].confidence == pytest.approx(0.45)
    assert answers[1].token_logprobs == pytest.approx([math.log(0.9), math.log(0.5)])
    assert answers[2].confidence is None and answers[3].confidence is None
    body = server.bodies[0]
    assert body["temperature"] == 0 and body["max_tokens"] == 64
    assert body["stop"] == ["\n"] and body["logprobs"] is True
    question = body["messages"][0]["content"].split("Q: ")[1].split("\n")[0]
    expected = load_template("answer-v1").render(question=question)
    assert body["messages"] == [{"role": "user", "content": expected}]
    assert answerer.stats.counts["answered"] == 4
    assert answerer.stats.counts["without_logprobs"] == 2


@pytest.mark.parametrize("shape", ["openai", "completions-logprobs", "ollama", "llama.cpp"])
def test_confidence_from_each_servers_logprobs_layout(shape: str) -> None:
    with FakeOpenAIServer(table_rule(TABLE), shape=shape) as server:
        answerer = OpenAIAnswerer(settings(server), progress=False)
        answers = answerer.answer(["Who wrote Hamlet?", "Which river is longest?"])
    assert answers[0].token_logprobs == pytest.approx([math.log(0.9), math.log(0.5)])
    assert answers[0].confidence == pytest.approx(0.45)
    assert answers[1].text == "The Nile" and answers[1].confidence is None


def test_a_server_without_logprobs_gives_no_confidence() -> None:
    with FakeOpenAIServer(table_rule(TABLE), shape="no-logprobs") as server:
        answerer = OpenAIAnswerer(settings(server), progress=False)
        (answer,) = answerer.answer(["Who wrote Hamlet?"])
    assert answer.text == "William Shakespeare" and answer.confidence is None
    assert answerer.stats.counts["without_logprobs"] == 1


def test_logprobs_off_and_no_stop() -> None:
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        answerer = OpenAIAnswerer(settings(server, logprobs=False, stop=()), progress=False)
        (answer,) = answerer.answer(["What is the capital of France?"])
    assert answer.text == "Paris" and answer.confidence is None
    assert "logprobs" not in server.bodies[0] and "stop" not in server.bodies[0]
    assert answerer.decoding()["logprobs"] is False


def test_a_failed_request_is_an_error_not_an_answer() -> None:
    with FakeOpenAIServer(table_rule(TABLE)) as server:
        answerer = OpenAIAnswerer(settings(server), progress=False)
        (answer,) = answerer.answer(["Who wrote Hamlet? [[500:99]]"])
    assert not answer.ok and answer.error is not None and answer.error.startswith("http_500")
    assert answer.text == ""


def test_sequence_probability_and_settings() -> None:
    assert sequence_probability([]) is None and sequence_probability(None) is None
    assert sequence_probability([0.0, 0.0]) == 1.0
    assert sequence_probability([math.log(0.5)] * 3) == pytest.approx(0.125)
    with pytest.raises(ConfigError, match="max_tokens"):
        OpenAIAnswererSettings(max_tokens=0)
    identity = OpenAIAnswererSettings().identity()
    assert "max_concurrency" not in identity and "base_url" not in identity
    assert identity["prompt_sha256"] == load_template("answer-v1").sha256
