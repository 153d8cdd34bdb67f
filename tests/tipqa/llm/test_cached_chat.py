"""The one LLM cache at the chat-model seam: keys, the batch path, storing as answers arrive.

The judge and keyword extractor go through it against the local OpenAI-compatible server; a
scripted in-process transport checks what the seam itself promises (each distinct request asked
once, each usable completion stored on arrival, refused and failed ones not kept).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest
from support import openai_server as fake
from support.judge_support import judge_request

from tipqa.core.records import Question
from tipqa.core.stats import StepStats
from tipqa.llm.cache import LLMCache, StoreOnArrival
from tipqa.llm.cached_chat import CachedChatModel, cached, entry, read_entry, request_key
from tipqa.llm.chat import ChatPrompt, Completion, Decoding, OnCompletion
from tipqa.llm.judges.openai import OpenAIJudge, OpenAIJudgeSettings
from tipqa.llm.keywords.openai import OpenAIKeywordExtractor, OpenAIKeywordSettings
from tipqa.llm.usage import Usage

GREEDY = Decoding(max_tokens=4)


class Scripted:
    """A transport answering "echo: <last message>", that fails on demand and records calls."""

    provider = "scripted"
    model = "m"

    def __init__(self, fail_after: int | None = None) -> None:
        self.stats = StepStats("chat")
        self.sent: list[list[str]] = []
        self.fail_after = fail_after

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model}

    def complete(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        *,
        desc: str = "chat",
        on_result: OnCompletion | None = None,
    ) -> list[Completion]:
        self.sent.append([p.messages[-1]["content"] for p in prompts])
        out = []
        for i, prompt in enumerate(prompts):
            if self.fail_after is not None and i >= self.fail_after:
                raise RuntimeError("killed")
            text = prompt.messages[-1]["content"]
            done = Completion(f"echo: {text}", [[("yes", -0.5)]], [-0.5], Usage(10, 2))
            if "fail" in text:
                done = Completion(error="http_500")
            out.append(done)
            if on_result is not None:
                on_result(i, done)
        return out

    def close(self) -> None:
        """Nothing held."""


def prompt(text: str) -> ChatPrompt:
    return ChatPrompt([{"role": "user", "content": text}])


def test_key_depends_on_every_part_but_not_on_order() -> None:
    identity = {"provider": "p", "model": "m", "seed": 0}
    messages = [{"role": "user", "content": "q"}]
    base = request_key(identity, messages, GREEDY)
    assert base == request_key(dict(reversed(identity.items())), messages, GREEDY)
    assert len(base) == 64
    variants = [
        request_key({**identity, "model": "n"}, messages, GREEDY),
        request_key({"provider": "p", "model": "m"}, messages, GREEDY),
        request_key(identity, [{"role": "user", "content": "r"}], GREEDY),
        request_key(identity, [{"role": "system", "content": "q"}], GREEDY),
        *(
            request_key(identity, messages, dataclasses.replace(GREEDY, **change))
            for change in (
                {"max_tokens": 5},
                {"temperature": 1.0},
                {"seed": 1},
                {"top_logprobs": 5},
                {"token_logprobs": True},
                {"choice": ("yes", "no")},
                {"stop": ("\n",)},
                {"extra": {"x": 1}},
            )
        ),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_no_cache_is_the_transport_itself(tmp_path) -> None:
    transport = Scripted()
    assert cached(transport, None) is transport
    wrapped = cached(transport, LLMCache(tmp_path / "c"))
    assert isinstance(wrapped, CachedChatModel) and wrapped.stats is transport.stats


def test_hits_first_each_distinct_miss_asked_once_usable_ones_stored(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c")
    transport = Scripted()
    chat = CachedChatModel(transport, cache)
    chat.complete([prompt("a")], GREEDY)
    heard: list[tuple[int, str, bool]] = []

    def hear(i: int, done: Completion) -> bool:
        heard.append((i, done.text, done.cached))
        return done.text != "echo: refused"

    texts = ["b", "a", "b", "fail", "refused", "c"]
    out = chat.complete([prompt(t) for t in texts], GREEDY, on_result=hear)
    assert [c.text for c in out] == [
        "echo: b",
        "echo: a",
        "echo: b",
        "",
        "echo: refused",
        "echo: c",
    ]
    assert transport.sent[-1] == ["b", "fail", "refused", "c"]
    assert heard[0] == (1, "echo: a", True), "the hit is heard before anything is asked"
    assert sorted(i for i, _, _ in heard) == list(range(6))
    counts = transport.stats.counts
    assert counts["cache_hits"] == 1 and counts["cache_misses"] == 1 + 5
    assert counts["saved_prompt_tokens"] == 10 and counts["saved_completion_tokens"] == 2
    assert counts["cache_stored"] == 1 + 2, "a, then b and c: not the failure, not the refused"
    with sqlite3.connect(cache.files()[0]) as raw:
        assert {row[0] for row in raw.execute("SELECT backend FROM llm_cache")} == {
            "chat:scripted:m"
        }
    again = Scripted()
    second = CachedChatModel(again, LLMCache(tmp_path / "c")).complete(
        [prompt(t) for t in texts], GREEDY
    )
    assert again.sent == [["fail", "refused"]]
    assert [c.cached for c in second] == [True, True, True, False, False, True]
    assert second[0].top_logprobs == [[("yes", -0.5)]] and second[0].token_logprobs == [-0.5]
    assert second[0].usage == Usage(10, 2)


def test_answers_received_before_a_failure_are_kept(tmp_path) -> None:
    chat = CachedChatModel(Scripted(fail_after=2), LLMCache(tmp_path / "c"))
    with pytest.raises(RuntimeError, match="killed"):
        chat.complete([prompt(t) for t in "abcd"], GREEDY)
    again = Scripted()
    CachedChatModel(again, LLMCache(tmp_path / "c")).complete([prompt(t) for t in "abcd"], GREEDY)
    assert again.sent == [["c", "d"]]


def test_an_unreadable_entry_is_counted_and_asked_again(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c")
    CachedChatModel(Scripted(), cache).complete([prompt("a")], GREEDY)
    [file] = cache.files()
    with sqlite3.connect(file) as raw:
        raw.execute("""UPDATE llm_cache SET value = '{"text": "x", "top_logprobs": [["y"]]}'""")
    transport = Scripted()
    [done] = CachedChatModel(transport, LLMCache(tmp_path / "c")).complete([prompt("a")], GREEDY)
    assert done.text == "echo: a" and not done.cached and transport.sent == [["a"]]
    assert transport.stats.errors["cache_bad_entry"] == 1


def test_a_token_that_cannot_be_chosen_is_read_back(tmp_path) -> None:
    """Constrained decoding reports -inf, which JSON stores as null."""
    cache = LLMCache(tmp_path / "c")
    done = Completion("yes", [[("yes", -0.1), ("maybe", -math.inf)]], [-0.1], Usage(10, 1))
    cache.put_many([("k", "chat", entry(done))])
    back = read_entry(LLMCache(tmp_path / "c").get_many(["k"])["k"])
    assert back is not None and back.top_logprobs == done.top_logprobs and back.cached


def test_store_on_arrival_commits_everything_and_raises_a_failure(tmp_path) -> None:
    cache = LLMCache(tmp_path / "c")
    store = StoreOnArrival(cache)
    for i in range(300):
        store.put(f"k{i}", "b", {"i": i})
    assert store.close() == 300 and len(cache) == 300
    unwritable = LLMCache(tmp_path / "d")
    (tmp_path / "d").write_text("a file where the cache's folder belongs")
    broken = StoreOnArrival(unwritable)
    broken.put("k", "b", {"i": 0})
    with pytest.raises(FileExistsError):
        broken.close()


def judge_for(server, cache: LLMCache, model: str = "judge-model", **options) -> OpenAIJudge:
    options.setdefault("backoff_base", 0.001)
    settings = OpenAIJudgeSettings(model=model, base_url=server.base_url, **options)
    return OpenAIJudge(settings, cache=cache, progress=False)


request = functools.partial(
    judge_request,
    question="Which town hosted the first Lantern Fair?",
    answer="Harrowgate",
    keywords=["Lantern Fair"],
    stage="vector",
    unit="c{index}",
)
REQUESTS = [
    request("The first Lantern Fair was held in Harrowgate.", 0),
    request("The fair moved to Dunmere in 1920.", 1),
    request("Harrowgate lanterns, again.", 2),
]


@pytest.mark.needs("openai")
def test_a_judge_s_second_run_makes_no_calls_and_gives_the_same_judgments(
    openai_server, tmp_path
) -> None:
    server = openai_server
    first_judge = judge_for(server, LLMCache(tmp_path / "c"))
    first = first_judge.judge(REQUESTS)
    assert server.calls == 3 and [j.label for j in first] == ["yes", "no", "yes"]
    assert not any(j.cached for j in first)
    counts = first_judge.stats.counts
    assert counts["cache_misses"] == counts["cache_stored"] == counts["calls"] == 3
    server.reset()
    second_judge = judge_for(server, LLMCache(tmp_path / "c"))
    second = second_judge.judge(REQUESTS)
    assert server.calls == 0 and all(j.cached for j in second)
    assert [dataclasses.replace(j, cached=False) for j in second] == first
    assert second_judge.stats.counts["cache_hits"] == 3
    assert second_judge.stats.counts["judged"] == 3, "hits are parsed and counted like answers"
    assert second_judge.stats.counts["saved_prompt_tokens"] == counts["prompt_tokens"] > 0


@pytest.mark.needs("openai")
def test_a_prompt_repeated_in_a_batch_is_asked_once_and_judged_for_each(
    openai_server, tmp_path
) -> None:
    server = openai_server
    judge = judge_for(server, LLMCache(tmp_path / "c"))
    twin = dataclasses.replace(REQUESTS[0], question_id="q9", doc_id="d9", unit_id="c9")
    judgments = judge.judge([REQUESTS[0], twin])
    assert server.calls == 1
    assert [(j.question_id, j.unit_id, j.label) for j in judgments] == [
        ("q0", "c0", "yes"),
        ("q9", "c9", "yes"),
    ]


@pytest.mark.needs("openai")
def test_failed_and_unparseable_answers_are_not_kept_and_a_re_ask_goes_out(
    openai_server, tmp_path
) -> None:
    server = openai_server
    flaky = [request("Harrowgate [[500:1]]", 0), request("Harrowgate [[garbage:1]]", 1)]
    first = judge_for(server, LLMCache(tmp_path / "c"), max_retries=0, parse_retries=0)
    assert [j.label for j in first.judge(flaky)] == [None, None]
    assert len(LLMCache(tmp_path / "c")) == 0
    second = judge_for(server, LLMCache(tmp_path / "c"), max_retries=0, parse_retries=0)
    assert [j.label for j in second.judge(flaky)] == ["yes", "yes"]
    assert second.stats.counts["cache_hits"] == 0 and len(LLMCache(tmp_path / "c")) == 2
    server.reset()
    again = request("Harrowgate [[garbage:1]] once more", 2)
    reasked = judge_for(server, LLMCache(tmp_path / "c"), parse_retries=1)
    assert reasked.judge([again])[0].label == "yes"
    assert server.calls == 2, "the same greedy request, asked again after an unparseable answer"


@pytest.mark.needs("openai")
def test_the_key_follows_model_template_and_decoding_not_ids(openai_server, tmp_path) -> None:
    server = openai_server
    cache = LLMCache(tmp_path / "c")
    judge_for(server, cache).judge(REQUESTS)
    template = tmp_path / "judge.txt"
    template.write_text("Passage:\n{document}\n\nQuestion: {question}\nExpected answer: {answer}\n")
    for options in ({"model": "other-model"}, {"prompt": str(template)}, {"mode": "choice"}):
        server.reset()
        other = judge_for(server, cache, **options)
        other.judge(REQUESTS)
        assert server.calls == 3 and other.stats.counts["cache_hits"] == 0, options
    server.reset()
    moved = [dataclasses.replace(r, question_id="x", doc_id="y", unit_id="z") for r in REQUESTS]
    assert [j.cached for j in judge_for(server, cache).judge(moved)] == [True] * 3
    assert server.calls == 0


def keyword_rule(body, attempt, headers):
    question = fake.last_user_message(body)
    injected = fake.marker_reply(question, attempt, headers)
    words = [word.strip("?") for word in question.split()[1:]]
    return injected or fake.Reply(text=", ".join(w for w in words if w.istitle()))


@pytest.mark.needs("openai")
def test_keywords_through_the_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    questions = [
        Question("q0", "Who built Fenwick Mill?", "a", ["a"]),
        Question("q1", "Where is Ostrava Lake?", "b", ["b"]),
        Question("q2", "Who painted Ellery Dawn [[500:1]]?", "c", ["c"]),
        Question("q3", "who painted it?", "d", ["d"]),
    ]
    with fake.FakeOpenAIServer(keyword_rule) as server:

        def extractor() -> OpenAIKeywordExtractor:
            settings = OpenAIKeywordSettings(model="kw", base_url=server.base_url, max_retries=0)
            return OpenAIKeywordExtractor(settings, cache=LLMCache(tmp_path / "c"), progress=False)

        first = extractor().extract(questions)
        assert [k.keywords for k in first] == [["Fenwick", "Mill"], ["Ostrava", "Lake"], [], []]
        assert first[2].error.startswith("http_500") and first[3].error.startswith("no keywords")
        server.reset()
        again = extractor()
        second = again.extract(questions)
        assert server.calls == 2, "the failure and the answer without keywords are asked again"
        assert [dataclasses.replace(k, cached=False) for k in second[:2]] == first[:2]
        assert all(k.cached for k in second[:2]) and not first[0].cached
        assert second[2].keywords == ["Ellery", "Dawn"] and second[2].error is None
        assert again.stats.counts["cache_hits"] == 2 and again.stats.counts["cache_misses"] == 2
        server.reset()
        third = extractor().extract([dataclasses.replace(questions[0], id="other")])
        assert server.calls == 0
        assert third[0].question_id == "other" and third[0].keywords == ["Fenwick", "Mill"]
