"""The chat client against a real local OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import logging
import socket
import sys

import pytest

from tipqa.core.errors import ConfigError, CredentialsError, MissingExtraError
from tipqa.llm.openai_client import OpenAIChatClient, Usage, is_local_url

pytestmark = pytest.mark.needs("openai")


def user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def make_client(server, **options) -> OpenAIChatClient:
    options.setdefault("backoff_base", 0.001)
    options.setdefault("progress", False)
    options.setdefault("timeout", 2.0)
    return OpenAIChatClient.of(model="test-model", base_url=server.base_url, **options)


def judge_prompt(passage: str, answer: str) -> str:
    return f"Passage:\n{passage}\n\nQuestion: q?\nExpected answer: {answer}\n\nReply."


def test_answers_in_order_at_temperature_zero(openai_server) -> None:
    client = make_client(openai_server)
    answers = ["Paris" if i % 2 else "Rome" for i in range(6)]
    batch = [user(judge_prompt(f"text {i} mentions Paris", a)) for i, a in enumerate(answers)]
    results = client.complete_many(batch, max_tokens=2)
    assert [r.text for r in results] == ["no", "yes", "no", "yes", "no", "yes"]
    assert all(r.ok and r.attempts == 1 for r in results)
    body = openai_server.bodies[0]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 2
    assert sorted(json.dumps(b["messages"]) for b in openai_server.bodies) == sorted(
        json.dumps(m) for m in batch
    )
    assert client.stats.counts["calls"] == 6
    assert client.stats.counts["requests"] == 6
    expected_prompt_tokens = sum(len(m[0]["content"].split()) for m in batch)
    assert client.stats.counts["prompt_tokens"] == expected_prompt_tokens
    assert client.stats.counts["completion_tokens"] == 6
    assert results[0].usage == Usage(len(batch[0][0]["content"].split()), 1)


def test_429_is_retried_then_succeeds(openai_server) -> None:
    client = make_client(openai_server, max_retries=5)
    result = client.complete(user(judge_prompt("Paris [[429:2]]", "Paris")))
    assert result.ok and result.text == "yes"
    assert result.attempts == 3
    assert openai_server.statuses == {429: 2, 200: 1}
    assert client.stats.counts["retries"] == 2
    assert client.stats.counts["retries_http_429"] == 2
    assert not client.stats.errors


def test_permanent_500_gives_up_after_max_retries(openai_server) -> None:
    client = make_client(openai_server, max_retries=2)
    result = client.complete(user(judge_prompt("Paris [[500:99]]", "Paris")))
    assert not result.ok
    assert result.error == "http_500"
    assert "injected 500" in result.describe_error()
    assert openai_server.calls == 3
    assert client.stats.errors["http_500"] == 1


def test_no_hidden_retries_in_the_openai_client(openai_server) -> None:
    client = make_client(openai_server, max_retries=0)
    assert client.complete(user("x [[500:99]]")).error == "http_500"
    assert openai_server.calls == 1


def test_a_refused_key_stops_at_once_without_retries(openai_server) -> None:
    client = make_client(openai_server, max_retries=5, max_concurrency=2)
    with pytest.raises(CredentialsError, match=r"refused the API key \(http_401"):
        client.complete_many([user(f"x{i} [[401:99]]") for i in range(40)])
    assert openai_server.calls <= 4  # those in flight when the first refusal came back


def test_timeout_is_retried_then_succeeds(openai_server) -> None:
    client = make_client(openai_server, timeout=0.3, max_retries=2)
    result = client.complete(user(judge_prompt("Paris [[slow:1]]", "Paris")))
    assert result.ok and result.text == "yes"
    assert result.attempts == 2
    assert client.stats.counts["retries_timeout"] == 1


def test_permanent_timeout_fails(openai_server) -> None:
    client = make_client(openai_server, timeout=0.2, max_retries=1)
    result = client.complete(user("x [[slow:99]]"))
    assert result.error == "timeout"
    assert result.attempts == 2
    assert client.stats.errors["timeout"] == 1


def test_connection_refused_is_a_connection_error(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = OpenAIChatClient.of(
        model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_base=0.001
    )
    result = client.complete(user("hello"))
    assert result.error == "connection"
    assert client.stats.counts["retries_connection"] == 1


def test_concurrency_is_bounded(openai_server) -> None:
    openai_server.delay = 0.05
    client = make_client(openai_server, max_concurrency=3)
    results = client.complete_many([user(f"question {i}") for i in range(15)])
    assert len(results) == 15 and all(r.ok for r in results)
    assert openai_server.max_in_flight == 3


def test_backoff_grows_with_jitter_and_respects_retry_after(openai_server) -> None:
    client = make_client(openai_server, backoff_base=1.0, backoff_max=8.0)
    delays = [client._backoff(attempt, None) for attempt in range(1, 7)]
    for attempt, delay in enumerate(delays, start=1):
        ceiling = min(8.0, 2.0 ** (attempt - 1))
        assert ceiling / 2 <= delay <= ceiling
    assert len({client._backoff(3, None) for _ in range(20)}) > 1
    assert client._backoff(1, 5.0) >= 5.0
    assert client._backoff(1, 500.0) == 8.0


def test_api_key_is_never_logged_or_stored(openai_server, caplog, capsys) -> None:
    secret = "sk-tipqa-TEST-9f8e7d6c5b4a39281706"
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "tipqa"):
        caplog.set_level(logging.DEBUG, logger=name)
    client = make_client(openai_server, api_key=secret, max_retries=1, progress=True)
    batch = [user("x [[500:99]]"), user("z [[429:1]]"), user("w")]
    results = client.complete_many(batch)
    with pytest.raises(CredentialsError) as refused:
        client.complete(user("y [[401:99]]"))
    assert openai_server.headers[0]["authorization"] == f"Bearer {secret}"
    texts = [record.getMessage() for record in caplog.records]
    texts += [repr(record.args) for record in caplog.records]
    texts += [json.dumps(client.stats.to_dict()), repr(client)]
    texts += [r.describe_error() + r.text for r in results] + [str(refused.value)]
    captured = capsys.readouterr()
    texts += [captured.out, captured.err]
    assert {r.name.split(".")[0] for r in caplog.records} >= {"openai", "tipqa"}
    assert results[0].error == "http_500"
    assert "(http_401: bad key Bearer ***)" in str(refused.value)
    assert not [text for text in texts if secret in text]


def test_missing_key_is_a_placeholder_only_for_local_servers(openai_server, monkeypatch) -> None:
    client = make_client(openai_server)
    assert client.complete(user("x")).ok
    assert openai_server.headers[0]["authorization"] == "Bearer EMPTY"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIChatClient.of(model="m", base_url="https://llm.example.org/v1")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIChatClient.of(model="m")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    client = OpenAIChatClient.of(model="m", progress=False)
    assert client.base_url == openai_server.base_url
    assert client.complete(user("x")).ok
    assert openai_server.headers[-1]["authorization"] == "Bearer from-env"


def test_is_local_url() -> None:
    assert is_local_url("http://127.0.0.1:8000/v1")
    assert is_local_url("http://localhost/v1")
    assert not is_local_url("https://api.openai.com/v1")


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="max_concurrency"):
        OpenAIChatClient.of(model="m", base_url="http://localhost/v1", max_concurrency=0)
    with pytest.raises(ConfigError, match="model"):
        OpenAIChatClient.of(model="", base_url="http://localhost/v1")


def test_missing_openai_package_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtraError, match=r"tipqa\[openai\]"):
        OpenAIChatClient.of(model="m", base_url="http://localhost/v1")


def test_odd_logprobs_are_skipped(openai_server, server_module) -> None:
    odd = [
        {"token": "yes", "logprob": None},
        {"token": None, "logprob": -1.0},
        {"token": "no", "logprob": "-inf"},
        {"token": "no", "logprob": -0.5},
    ]
    openai_server.rule = lambda body, attempt, headers: server_module.Reply(
        text="no", top_logprobs=odd
    )
    result = make_client(openai_server).complete(user("x"), logprobs=True, top_logprobs=4)
    assert result.ok and result.top_logprobs == [[("no", -0.5)]]


@pytest.mark.parametrize("payload", [b"<html>proxy error</html>", b'{"choices": []}', b"{}"])
def test_unreadable_response_is_a_failure(openai_server, server_module, payload) -> None:
    openai_server.rule = lambda body, attempt, headers: server_module.Reply(body=payload)
    client = make_client(openai_server)
    results = client.complete_many([user("x"), user("y")])
    assert [r.error for r in results] == ["bad_response", "bad_response"]
    assert client.stats.errors["bad_response"] == 2
