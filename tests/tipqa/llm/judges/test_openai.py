"""The OpenAI-compatible judge against a real local chat-completions server."""

from __future__ import annotations

import functools

import pytest
from support.judge_support import judge_request

from tipqa.core.errors import ConfigError
from tipqa.llm.cache import LLMCache
from tipqa.llm.cached_chat import CachedChatModel
from tipqa.llm.chat import p_yes
from tipqa.llm.judges.base import JUDGES
from tipqa.llm.judges.openai import OpenAIJudge, OpenAIJudgeSettings
from tipqa.llm.prompts import load_template

pytestmark = pytest.mark.needs("openai")


request = functools.partial(
    judge_request,
    question="Where did the schooner Wren run aground?",
    answer="Marlow Bay",
    keywords=["Wren"],
)


def make_judge(server, cache: LLMCache | None = None, **options) -> OpenAIJudge:
    options.setdefault("backoff_base", 0.001)
    options.setdefault("timeout", 2.0)
    settings = OpenAIJudgeSettings(model="judge-model", base_url=server.base_url, **options)
    return OpenAIJudge(settings, cache=cache, progress=False)


def test_prompt_and_parameters_sent(server) -> None:
    judge = make_judge(server)
    req = request("The Wren ran aground off Marlow Bay in 1802.")
    [judgment] = judge.judge([req])
    [body] = server.bodies
    template = load_template("judge-v1")
    expected = template.render(document=req.text, question=req.question, answer=req.answer)
    assert body["messages"] == [{"role": "user", "content": expected}]
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 2
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert "structured_outputs" not in body
    assert judgment.label == "yes" and judgment.raw == "yes" and judgment.error is None
    assert judgment.judge == f"openai:judge-model:{template.short_hash}" == judge.name
    assert (judgment.question_id, judgment.doc_id, judgment.unit_id) == ("q0", "d0", "d0#0")
    assert judgment.cached is False


def test_labels_and_p_yes(server) -> None:
    judge = make_judge(server)
    yes, no = judge.judge([request("Wreck at Marlow Bay."), request("Nothing here.", index=1)])
    assert yes.label == "yes" and yes.p_yes == pytest.approx(0.8)
    assert no.label == "no" and no.p_yes == pytest.approx(0.3)
    assert judge.stats.counts["label_yes"] == 1 and judge.stats.counts["label_no"] == 1


def test_plain_mode_asks_for_the_answer_only(server) -> None:
    judge = make_judge(server, mode="plain", max_tokens=1)
    [judgment] = judge.judge([request("Marlow Bay")])
    body = server.bodies[0]
    assert "logprobs" not in body and "top_logprobs" not in body
    assert "structured_outputs" not in body and "grammar" not in body
    assert body["max_tokens"] == 1
    assert judgment.label == "yes" and judgment.p_yes is None
    assert "logprobs_missing" not in judge.stats.counts


@pytest.mark.parametrize(
    ("via", "field", "value"),
    [
        ("structured_outputs", "structured_outputs", {"choice": ["yes", "no"]}),
        ("guided_choice", "guided_choice", ["yes", "no"]),
        ("grammar", "grammar", 'root ::= "yes" | "no"'),
    ],
)
def test_choice_mode_sends_the_constraint_the_server_reads(server, via, field, value) -> None:
    judge = make_judge(server, mode="choice", choice_via=via)
    [judgment] = judge.judge([request("Marlow Bay")])
    body = server.bodies[0]
    assert body[field] == value
    assert body["logprobs"] is True
    assert judgment.label == "yes" and judgment.p_yes == pytest.approx(0.8)


def test_extra_body_is_sent_and_keys_the_cache(server, tmp_path) -> None:
    cache = LLMCache(tmp_path / "cache")

    def key(judge: OpenAIJudge) -> str:
        assert isinstance(judge.chat, CachedChatModel)
        return judge.chat.key(judge.prompt(request("x")), judge.task.decoding(0))

    judge = make_judge(server, cache, extra_body={"reasoning_effort": "none"})
    judge.judge([request("Marlow Bay")])
    assert server.bodies[0]["reasoning_effort"] == "none"
    plain = make_judge(server, cache)
    assert key(judge) != key(plain)
    assert key(make_judge(server, cache, timeout=9.0)) == key(plain)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tokens": 0}, "max_tokens must be >= 1"),
        ({"parse_retries": -1}, "parse_retries must be >= 0"),
        ({"top_logprobs": 21}, "top_logprobs must be 0..20"),
    ],
)
def test_bad_settings_are_config_errors(options, message) -> None:
    with pytest.raises(ConfigError, match=message):
        OpenAIJudgeSettings(**options)


def test_choice_mode_constrains_the_answer(server) -> None:
    judge = make_judge(server, mode="choice")
    [judgment] = judge.judge([request("Marlow Bay")])
    body = server.bodies[0]
    assert body["structured_outputs"] == {"choice": ["yes", "no"]}
    assert body["logprobs"] is True and judgment.label == "yes"


def test_failures_do_not_lose_the_batch(server) -> None:
    judge = make_judge(server, max_retries=1, timeout=0.3)
    requests = [
        request("Marlow Bay one", index=0),
        request("Marlow Bay [[500:99]]", index=1),
        request("nothing", index=2),
        request("Marlow Bay [[slow:99]]", index=3),
        request("Marlow Bay [[429:1]]", index=4),
    ]
    judgments = judge.judge(requests)
    assert [j.question_id for j in judgments] == ["q0", "q1", "q2", "q3", "q4"]
    assert [j.label for j in judgments] == ["yes", None, "no", None, "yes"]
    assert judgments[1].error.startswith("http_500")
    assert judgments[3].error.startswith("timeout")
    assert judgments[1].failed and judgments[3].failed
    assert judge.stats.counts["failed"] == 2
    assert judge.stats.errors["http_500"] == 1 and judge.stats.errors["timeout"] == 1


def test_garbage_is_reasked_then_accepted(server) -> None:
    judge = make_judge(server, parse_retries=2)
    [judgment] = judge.judge([request("Marlow Bay [[garbage:1]]")])
    assert judgment.label == "yes" and judgment.error is None
    assert server.calls == 2
    assert judge.stats.counts["parse_retries"] == 1


def test_persistent_garbage_becomes_a_failed_judgment(server) -> None:
    judge = make_judge(server, parse_retries=2)
    garbage, empty, fine = judge.judge(
        [
            request("Marlow Bay [[garbage:99]]", index=0),
            request("Marlow Bay [[empty:99]]", index=1),
            request("Marlow Bay", index=2),
        ]
    )
    assert garbage.label is None and garbage.error == "unparseable: 'maybe'"
    assert garbage.raw == "maybe"
    assert empty.label is None and empty.error == "unparseable: ''"
    assert fine.label == "yes"
    assert server.calls == 3 + 3 + 1
    assert judge.stats.errors["unparseable"] == 2


def test_no_parse_retries(server) -> None:
    judge = make_judge(server, parse_retries=0)
    [judgment] = judge.judge([request("Marlow Bay [[garbage:1]]")])
    assert judgment.failed and server.calls == 1


def test_concurrency_bound(server) -> None:
    server.delay = 0.05
    judge = make_judge(server, max_concurrency=2)
    judgments = judge.judge([request(f"Marlow Bay {i}", index=i) for i in range(8)])
    assert all(j.label == "yes" for j in judgments)
    assert server.max_in_flight == 2


def test_custom_template(server, tmp_path) -> None:
    path = tmp_path / "judge.txt"
    path.write_text("Q: {question}\nA: {answer}\nText: {document}\nyes or no?")
    judge = make_judge(server, prompt=str(path))
    judge.judge([request("some text")])
    content = server.bodies[0]["messages"][0]["content"]
    assert content == (
        "Q: Where did the schooner Wren run aground?\nA: Marlow Bay\nText: some text\nyes or no?"
    )
    assert judge.name == f"openai:judge-model:{load_template(str(path)).short_hash}"
    assert judge.name != make_judge(server).name


def test_template_without_slots_is_rejected(server, tmp_path) -> None:
    path = tmp_path / "judge.txt"
    path.write_text("Is {document} relevant?")
    with pytest.raises(ConfigError, match=r"\{question\}, \{answer\}"):
        make_judge(server, prompt=str(path))


def test_created_from_the_registry(server) -> None:
    settings = JUDGES.parse("openai", "judge", {"model": "m", "base_url": server.base_url})
    judge = JUDGES.create("openai", settings, progress=False)
    assert isinstance(judge, OpenAIJudge)
    assert judge.judge([request("Marlow Bay")])[0].label == "yes"


def test_created_from_a_config_section_strictly(server) -> None:
    section = {"model": "m", "base_url": server.base_url, "mode": "plain", "max_tokens": "1"}
    settings = JUDGES.parse("openai", "judge", {**section, "extra_body": '{"think": false}'})
    assert settings == OpenAIJudgeSettings(
        model="m", base_url=server.base_url, mode="plain", max_tokens=1, extra_body={"think": False}
    )
    with pytest.raises(ConfigError, match=r"\[judge\] mode = 'loose': expected one of"):
        JUDGES.parse("openai", "judge", {**section, "mode": "loose"})


def test_p_yes_from_logprobs_merges_case_and_skips_positions() -> None:
    assert p_yes([]) is None
    assert p_yes([[("\n", -0.1)], [("Yes", -1.0), ("no", -1.0)]]) == 0.5
    assert p_yes([[(" yes", 0.0)]]) == 1.0
    assert p_yes([[("maybe", 0.0)]]) is None
