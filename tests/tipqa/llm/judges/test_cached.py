"""The cache wrappers around the OpenAI-compatible judge and keyword extractor."""

from __future__ import annotations

import dataclasses
import functools
import sqlite3

import openai_server as fake
import pytest
from judge_support import judge_request

from tipqa.core.records import Question
from tipqa.llm.cache import LLMCache
from tipqa.llm.judges.cached import CachedJudge
from tipqa.llm.judges.openai import OpenAIJudge, OpenAIJudgeSettings
from tipqa.llm.keywords.cached import CachedKeywordExtractor
from tipqa.llm.keywords.openai import OpenAIKeywordExtractor, OpenAIKeywordSettings

pytestmark = pytest.mark.needs("openai")


def judge_for(server, model: str = "judge-model", **options) -> OpenAIJudge:
    options.setdefault("backoff_base", 0.001)
    settings = OpenAIJudgeSettings(model=model, base_url=server.base_url, **options)
    return OpenAIJudge(settings, progress=False)


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


def test_second_run_makes_no_calls_and_gives_the_same_judgments(server, tmp_path) -> None:
    path = tmp_path / "llm.sqlite"
    first_judge = CachedJudge(judge_for(server), LLMCache(path))
    first = first_judge.judge(REQUESTS)
    assert server.calls == 3
    assert [j.label for j in first] == ["yes", "no", "yes"]
    assert not any(j.cached for j in first)
    assert first_judge.stats.counts["cache_misses"] == 3
    assert first_judge.stats.counts["cache_stored"] == 3
    assert first_judge.stats.counts["calls"] == 3
    assert (
        first_judge.stats.counts["prompt_tokens"] == first_judge.inner.stats.counts["prompt_tokens"]
    )

    server.reset()
    second_judge = CachedJudge(judge_for(server), LLMCache(path))
    second = second_judge.judge(REQUESTS)
    assert server.calls == 0
    assert all(j.cached for j in second)
    assert [dataclasses.replace(j, cached=False) for j in second] == first
    assert second_judge.stats.counts["cache_hits"] == 3
    assert second_judge.stats.counts["cache_misses"] == 0
    prompt_tokens = first_judge.inner.stats.counts["prompt_tokens"]
    assert second_judge.stats.counts["saved_prompt_tokens"] == prompt_tokens > 0


def test_only_misses_are_sent(server, tmp_path) -> None:
    judge = CachedJudge(judge_for(server), LLMCache(tmp_path / "c.sqlite"))
    judge.judge(REQUESTS[:2])
    server.reset()
    judgments = judge.judge(REQUESTS)
    assert server.calls == 1
    assert server.bodies[0]["messages"][0]["content"].count("Harrowgate lanterns, again.") == 1
    assert [j.cached for j in judgments] == [True, True, False]


def test_same_prompt_twice_in_a_batch_is_sent_once(server, tmp_path) -> None:
    judge = CachedJudge(judge_for(server), LLMCache(tmp_path / "c.sqlite"))
    twin = dataclasses.replace(REQUESTS[0], question_id="q9", doc_id="d9", unit_id="c9")
    judgments = judge.judge([REQUESTS[0], twin])
    assert server.calls == 1
    assert [(j.question_id, j.unit_id, j.label) for j in judgments] == [
        ("q0", "c0", "yes"),
        ("q9", "c9", "yes"),
    ]


def test_failed_judgments_are_not_cached(server, tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    flaky = [request("Harrowgate [[500:1]]", 0), request("Harrowgate [[garbage:1]]", 1)]
    first = CachedJudge(judge_for(server, max_retries=0, parse_retries=0), LLMCache(path))
    assert [j.label for j in first.judge(flaky)] == [None, None]
    assert len(LLMCache(path)) == 0
    second = CachedJudge(judge_for(server, max_retries=0, parse_retries=0), LLMCache(path))
    assert [j.label for j in second.judge(flaky)] == ["yes", "yes"]
    assert second.stats.counts["cache_hits"] == 0
    assert len(LLMCache(path)) == 2


def test_key_changes_with_model_and_template(server, tmp_path) -> None:
    cache = LLMCache(tmp_path / "c.sqlite")
    CachedJudge(judge_for(server), cache).judge(REQUESTS)
    server.reset()
    other_model = CachedJudge(judge_for(server, model="other-model"), cache)
    other_model.judge(REQUESTS)
    assert server.calls == 3 and other_model.stats.counts["cache_hits"] == 0
    template = tmp_path / "judge.txt"
    template.write_text("Passage:\n{document}\n\nQuestion: {question}\nExpected answer: {answer}\n")
    server.reset()
    other_template = CachedJudge(judge_for(server, prompt=str(template)), cache)
    other_template.judge(REQUESTS)
    assert server.calls == 3 and other_template.stats.counts["cache_hits"] == 0
    server.reset()
    other_settings = CachedJudge(judge_for(server, mode="choice"), cache)
    other_settings.judge(REQUESTS)
    assert server.calls == 3
    keys = {judge.key(REQUESTS[0]) for judge in (other_model, other_template, other_settings)}
    assert len(keys | {CachedJudge(judge_for(server), cache).key(REQUESTS[0])}) == 4


def test_ids_are_not_part_of_the_key(server, tmp_path) -> None:
    judge = CachedJudge(judge_for(server), LLMCache(tmp_path / "c.sqlite"))
    moved = dataclasses.replace(REQUESTS[0], question_id="x", doc_id="y", unit_id="z")
    assert judge.key(moved) == judge.key(REQUESTS[0])
    assert judge.key(dataclasses.replace(REQUESTS[0], text="other")) != judge.key(REQUESTS[0])


def test_unusable_cache_entry_is_a_counted_miss(server, tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    judge = CachedJudge(judge_for(server), LLMCache(path))
    judge.judge(REQUESTS[:1])
    [file] = LLMCache(path).files()
    with sqlite3.connect(file) as raw:
        raw.execute('UPDATE llm_cache SET value = \'{"label": "perhaps", "raw": "x"}\'')
    server.reset()
    again = CachedJudge(judge_for(server), LLMCache(path))
    [judgment] = again.judge(REQUESTS[:1])
    assert judgment.label == "yes" and not judgment.cached
    assert server.calls == 1
    assert again.stats.errors["cache_bad_entry"] == 1


def keyword_rule(body, attempt, headers):
    module = fake
    question = module.last_user_message(body)
    injected = module.marker_reply(question, attempt, headers)
    words = [word.strip("?") for word in question.split()[1:]]
    return injected or module.Reply(text=", ".join(w for w in words if w.istitle()))


def test_cached_keyword_extractor(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    questions = [
        Question("q0", "Who built Fenwick Mill?", "a", ["a"]),
        Question("q1", "Where is Ostrava Lake?", "b", ["b"]),
        Question("q2", "Who painted Ellery Dawn [[500:1]]?", "c", ["c"]),
    ]
    path = tmp_path / "c.sqlite"
    with fake.FakeOpenAIServer(keyword_rule) as server:

        def extractor() -> CachedKeywordExtractor:
            settings = OpenAIKeywordSettings(model="kw", base_url=server.base_url, max_retries=0)
            inner = OpenAIKeywordExtractor(settings, progress=False)
            return CachedKeywordExtractor(inner, LLMCache(path))

        first = extractor().extract(questions)
        assert [k.keywords for k in first] == [["Fenwick", "Mill"], ["Ostrava", "Lake"], []]
        assert first[2].error.startswith("http_500")
        assert server.calls == 3
        server.reset()
        again = extractor()
        second = again.extract(questions)
        assert server.calls == 1
        assert [dataclasses.replace(k, cached=False) for k in second[:2]] == first[:2]
        assert all(k.cached for k in second[:2]) and not first[0].cached
        assert second[2].keywords == ["Ellery", "Dawn"] and second[2].error is None
        assert again.stats.counts["cache_hits"] == 2
        assert again.stats.counts["cache_misses"] == 1
        server.reset()
        third = extractor().extract([dataclasses.replace(questions[0], id="other")])
        assert server.calls == 0
        assert third[0].question_id == "other" and third[0].keywords == ["Fenwick", "Mill"]
