"""Fault injection, fast version: one SIGKILL while judge calls are in flight, then a resume.

The resumed build must write the clean build's partition byte for byte, no prompt whose
answer was already in the LLM cache may reach the (counting) server again, and no prompt
answered before the kill may be sent again.
"""

from __future__ import annotations

import json
import math
import time
import urllib.request
from pathlib import Path

import pytest
from support.seed_support import seed_run

from benchmarks.fault_injection import (
    LOST_MARGIN,
    CountingServer,
    Start,
    config_for,
    durations,
    run_clean,
    run_once,
    summarize,
)
from tipqa.core.layout import RunLayout
from tipqa.core.records import JudgeRequest
from tipqa.llm.cache import LLMCache
from tipqa.llm.prompts import load_template

DOCUMENTS = 300
SHARD_SIZE = 10


@pytest.mark.needs("openai")
@pytest.mark.slow
def test_a_killed_build_resumes_to_identical_outputs_without_repeating_cached_calls(
    tmp_path: Path,
) -> None:
    with CountingServer(delay=0.02) as server:
        clean = run_clean(tmp_path / "clean", server, DOCUMENTS, SHARD_SIZE)
        assert clean.calls > 0
        folder = tmp_path / "killed"
        config = config_for(folder, server, DOCUMENTS, SHARD_SIZE)
        seed_run(folder, RunLayout(tmp_path / "clean" / "outputs" / "bench"))
        cache = folder / "outputs" / "bench" / "llm-cache"
        server.begin(cache, stall_after=6)
        killed = run_once(
            config,
            folder / "luigi.log",
            [("TokenJudge", 0.0)],
            lambda: (time.monotonic() - (server.stalled_since or math.inf)) > LOST_MARGIN + 0.5,
        )
        killed.calls = sum(server.phase_asked.values())
        assert killed.code == -9 and killed.killed_in == "TokenJudge"
        assert server.stored_keys(cache), "the keywords answered before the kill are cached"
        assert not (folder / "outputs" / "bench" / "pools" / "dev" / "partition").exists()
        server.begin(cache)
        resumed = run_once(config, folder / "luigi.log", [])
        resumed.calls = sum(server.phase_asked.values())
        summary = summarize(server, clean, [killed, resumed], tmp_path / "clean", folder)
    assert summary["final_exit_code"] == 0
    assert summary["partition_identical"], summary["differing_files"]
    assert summary["repeated_calls_for_cached_work"] == 0
    assert summary["answered_then_lost"] == 0, "answers received before the kill were kept"
    assert summary["cache_keys_checked"], summary["asked_but_never_stored"]


@pytest.mark.needs("openai")
def test_the_server_flags_a_call_whose_answer_is_already_cached(tmp_path: Path) -> None:
    cache_path = tmp_path / "llm-cache"
    request = JudgeRequest(
        "q1", "Who founded Vellmar Abbey?", "Ana Brisk", ["Ana Brisk"], ["Vellmar Abbey"],
        "token", "d1", "d1@w0", "Ana Brisk founded Vellmar Abbey in the spring.",
    )  # fmt: skip
    prompt = load_template("judge-v1").render(
        document=request.text, question=request.question, answer=request.answer
    )
    messages = [{"role": "user", "content": prompt}]
    body = json.dumps({"model": "x", "messages": messages})
    with CountingServer() as server:
        server.begin(cache_path)
        LLMCache(cache_path).put("unrelated", "x", {"label": "no"})

        def ask() -> str:
            post = urllib.request.Request(
                server.base_url + "/chat/completions",
                data=body.encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(post, timeout=10) as response:
                return json.loads(response.read())["choices"][0]["message"]["content"]

        assert ask() == "yes"
        assert server.repeated_cached == []
        key = server._key_of("judge", messages)
        LLMCache(cache_path).put(key, "x", {"text": "yes", "top_logprobs": []})
        assert ask() == "yes"
        assert len(server.repeated_cached) == 1
        assert sum(server.asked.values()) == 2


def test_stage_durations_and_the_running_task_come_from_the_log_events() -> None:
    start = Start(None)
    start.events = [
        (0.0, "running", "Partition"),
        (0.1, "new requirements", "Partition"),
        (0.2, "running", "TokenJudge"),
        (1.2, "done", "TokenJudge"),
        (1.5, "running", "TokenJudge"),
        (2.0, "running", "Partition"),
    ]
    assert start.running() == "Partition"
    start.events.append((2.5, "done", "Partition"))
    assert start.running() == "TokenJudge"
    took = durations(start)
    assert took == pytest.approx({"TokenJudge": 1.0, "Partition": 0.5})
