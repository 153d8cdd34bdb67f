"""The OpenAI-compatible judge against local servers answering in each documented shape."""

from __future__ import annotations

import functools

import pytest
from support import openai_server as fake
from support.judge_support import judge_request

from tipqa.core.records import Question
from tipqa.llm.judges.llm import REASONING_HINT
from tipqa.llm.judges.openai import OpenAIJudge, OpenAIJudgeSettings
from tipqa.llm.keywords.openai import OpenAIKeywordExtractor, OpenAIKeywordSettings

pytestmark = pytest.mark.needs("openai")

WITH_LOGPROBS = ["openai", "completions-logprobs", "no-usage", "ollama", "llama.cpp"]


@pytest.fixture(autouse=True)
def _no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


request = functools.partial(
    judge_request,
    question="Which harbour did the ketch Saltwren leave from?",
    answer="Port Ellery",
    keywords=["Saltwren"],
)


REQUESTS = [
    request("The Saltwren sailed from Port Ellery in May.", 0),
    request("The Saltwren was a ketch of forty tons.", 1),
]


def judge_on(server: fake.FakeOpenAIServer, **options: object) -> OpenAIJudge:
    settings = OpenAIJudgeSettings(
        model="local", base_url=server.base_url, backoff_base=0.001, **options
    )
    return OpenAIJudge(settings, progress=False)


@pytest.mark.parametrize("shape", WITH_LOGPROBS)
def test_labels_and_p_yes_in_every_shape_with_logprobs(shape: str) -> None:
    with fake.FakeOpenAIServer(shape=shape) as server:
        judge = judge_on(server)
        yes, no = judge.judge(REQUESTS)
    assert (yes.label, no.label) == ("yes", "no")
    assert yes.p_yes == pytest.approx(0.8) and no.p_yes == pytest.approx(0.3)
    assert "logprobs_missing" not in judge.stats.counts
    counts = judge.stats.counts
    if shape == "no-usage":
        assert counts["usage_missing"] == 2 and counts["prompt_tokens"] == 0
    else:
        assert "usage_missing" not in counts and counts["prompt_tokens"] > 0


def test_a_server_that_ignores_logprobs_still_gives_labels() -> None:
    with fake.FakeOpenAIServer(shape="no-logprobs") as server:
        judge = judge_on(server)
        yes, no = judge.judge(REQUESTS)
    assert server.bodies[0]["logprobs"] is True
    assert (yes.label, no.label) == ("yes", "no")
    assert yes.p_yes is None and no.p_yes is None
    assert judge.stats.counts["logprobs_missing"] == 2
    assert not judge.stats.errors


def test_llama_server_probabilities_after_sampling() -> None:
    with fake.FakeOpenAIServer(shape="llama.cpp") as server:
        judge = judge_on(server, extra_body={"post_sampling_probs": True})
        yes, no = judge.judge(REQUESTS)
    assert server.bodies[0]["post_sampling_probs"] is True
    assert yes.p_yes == pytest.approx(0.8) and no.p_yes == pytest.approx(0.3)


def chatty(body: dict, attempt: int, headers: dict) -> fake.Reply:
    """A model that answers in a sentence, which strict parsing does not accept."""
    reply = fake.judge_rule(body, attempt, headers)
    sentence = "Yes, it does." if reply.text == "yes" else "No, it does not."
    return fake.Reply(text=sentence, yes_probability=reply.yes_probability)


@pytest.mark.parametrize(
    ("shape", "via"), [("llama.cpp", "grammar"), ("openai", "structured_outputs")]
)
def test_choice_constrains_a_chatty_model(shape: str, via: str) -> None:
    with fake.FakeOpenAIServer(chatty, shape=shape) as server:
        loose = judge_on(server, mode="plain", parse_retries=0).judge(REQUESTS)
        judge = judge_on(server, mode="choice", choice_via=via)
        constrained = judge.judge(REQUESTS)
    assert [j.label for j in loose] == [None, None]
    assert loose[0].error == "unparseable: 'Yes, it does.'"
    assert [j.label for j in constrained] == ["yes", "no"]
    assert [j.raw for j in constrained] == ["yes", "no"]


def thinking(body: dict, attempt: int, headers: dict) -> fake.Reply:
    """A thinking model that spends its few tokens on reasoning."""
    return fake.Reply(text="", reasoning="The passage names the harbour")


@pytest.mark.parametrize("shape", ["ollama", "llama.cpp"])
def test_reasoning_without_an_answer_says_what_to_do(shape: str) -> None:
    with fake.FakeOpenAIServer(thinking, shape=shape) as server:
        [judgment] = judge_on(server, parse_retries=0).judge(REQUESTS[:1])
    assert judgment.label is None
    assert judgment.error == f"unparseable: '' ({REASONING_HINT})"


@pytest.mark.parametrize("shape", fake.SHAPES)
def test_keywords_in_every_shape(shape: str) -> None:
    def keywords(body: dict, attempt: int, headers: dict) -> fake.Reply:
        return fake.Reply(text="Saltwren, Port Ellery")

    question = Question("q0", "Did the Saltwren leave Port Ellery?", "yes", ["yes"])
    with fake.FakeOpenAIServer(keywords, shape=shape) as server:
        settings = OpenAIKeywordSettings(model="local", base_url=server.base_url)
        extractor = OpenAIKeywordExtractor(settings, progress=False)
        [result] = extractor.extract([question])
    assert result.keywords == ["Saltwren", "Port Ellery"] and result.error is None
    assert extractor.stats.counts.get("usage_missing", 0) == (1 if shape == "no-usage" else 0)
