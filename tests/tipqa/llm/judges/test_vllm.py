"""The vLLM judge: pure helpers everywhere, the real engine (tiny random model) in .venv-vllm."""

from __future__ import annotations

import importlib.util
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.judge_support import judge_request

from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.core.records import JudgeRequest
from tipqa.llm import vllm_engine
from tipqa.llm.cache import LLMCache
from tipqa.llm.chat import Completion, p_yes
from tipqa.llm.judges.base import JUDGES
from tipqa.llm.judges.vllm import VLLMJudge, VLLMJudgeSettings, max_window_words
from tipqa.llm.prompts import load_template
from tipqa.llm.vllm_engine import shutdown_engine

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(
    not HAVE_VLLM, reason="vllm is not installed: these tests run in .venv-vllm (see .ci/run)"
)
CONTEXT = 1024
ENGINE = {"max_model_len": CONTEXT, "enforce_eager": True, "dtype": "float32", "seed": 0}

SENTENCES = [
    "The lighthouse keeper painted the harbour wall blue in 1931.",
    "A retired astronomer counted seventeen comets over the northern hills.",
    "The village choir sang a song about the seven bridges of the city.",
    "My grandmother moved to Lisbon and opened a small bookshop.",
    "The museum curator found the answer in an old newspaper.",
    "An old sea captain remembered the name of the ship that sank in 1912.",
]


def request(index: int, text: str | None = None, question: str | None = None) -> JudgeRequest:
    """A judge request with a text that differs from one index to the next."""
    return judge_request(
        text if text is not None else " ".join(SENTENCES[: 1 + index % 6]) + f" ({index})",
        index,
        question=question or f"Who painted the harbour wall in {1900 + index}?",
        answer="the lighthouse keeper",
        aliases=["lighthouse keeper"],
        keywords=["harbour wall"],
        unit="d{index}#{index}",
    )


def test_max_window_words_follows_the_paper() -> None:
    assert 29_000 <= max_window_words(131_072) <= 30_500
    assert max_window_words(8192) == int((8192 - 512) * 0.23)
    assert max_window_words(1024) < max_window_words(2048) < max_window_words(32_768)
    assert max_window_words(100) == int(50 * 0.23)
    with pytest.raises(ConfigError):
        max_window_words(1)
    with pytest.raises(ConfigError):
        max_window_words(6)


def test_p_yes_from_candidates_exact_words() -> None:
    candidates = [(" Yes", math.log(0.3)), ("yes", math.log(0.1)), ("NO", math.log(0.2))]
    assert p_yes([candidates]) == pytest.approx(0.4 / 0.6)
    assert p_yes([[("y", 0.0), ("maybe", -1.0)]]) is None
    assert p_yes([[("no", 0.0), ("yes", float("-inf"))]]) == 0.0
    assert p_yes([[]]) is None
    assert p_yes([[("", -0.1), (" ", -0.2)]]) is None


def test_p_yes_from_candidates_prefixes_under_choice() -> None:
    candidates = [("y", math.log(0.3)), ("yes", math.log(0.2)), ("n", math.log(0.4))]
    candidates.append(("no", math.log(0.1)))
    assert p_yes([candidates], prefixes=True) == pytest.approx(0.5)
    assert p_yes([candidates]) == pytest.approx(0.2 / 0.3)
    assert p_yes([[("ye", 0.0), ("x", -1.0)]], prefixes=True) == 1.0


def test_settings_are_checked_and_named() -> None:
    judge = VLLMJudge.of("org/model", mode="choice")
    template = load_template("judge-v1")
    assert judge.name == f"vllm:org/model:choice:{template.short_hash}"
    assert judge.prompt_sha256 == template.sha256
    assert "renormalised" in judge.stats.info["p_yes"]
    assert VLLMJudge.of("m").name.startswith("vllm:m:logprobs:")
    assert judge.max_tokens == 4 and VLLMJudge.of("m").max_tokens == 1
    assert JUDGES.resolve("vllm") is VLLMJudge
    for bad in ({"mode": "beam"}, {"batch_size": 0}, {"parse_retries": -1}, {"max_model_len": 1}):
        with pytest.raises(ConfigError):
            VLLMJudge.of("m", **bad)


def test_template_without_slots_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "judge.txt"
    path.write_text("Is {document} relevant? yes or no")
    with pytest.raises(ConfigError, match="question"):
        VLLMJudge.of("m", prompt=str(path))


def test_no_requests_start_no_engine() -> None:
    before = dict(vllm_engine._ENGINE)
    assert VLLMJudge.of("no/such/model").judge([]) == []
    assert before == vllm_engine._ENGINE


@pytest.mark.skipif(HAVE_VLLM, reason="vllm is installed here")
def test_missing_vllm_names_the_extra() -> None:
    with pytest.raises(MissingExtraError, match=r"tipqa\[vllm\]"):
        VLLMJudge.of("some/model").judge([request(0)])


@pytest.fixture(scope="session")
def engine_model(vllm_environment: Path, tiny_model: Path) -> Iterator[str]:
    """The tiny model's path, with the process's one engine started for it (stopped after)."""
    engine = VLLMJudge.of(str(tiny_model), **ENGINE).engine
    assert engine.model_config.max_model_len == CONTEXT
    yield str(tiny_model)
    assert shutdown_engine()
    assert not shutdown_engine()


def judge_for(model: str, **options) -> VLLMJudge:
    """A judge on the shared engine."""
    return VLLMJudge.of(model, **ENGINE, **options)


@pytest.mark.vllm
@needs_vllm
def test_batches_keep_order_and_are_counted(engine_model: str) -> None:
    requests = [request(i) for i in range(10)]
    judge = judge_for(engine_model, mode="choice", batch_size=4, parse_retries=0)
    judgments = judge.judge(requests)
    assert [j.unit_id for j in judgments] == [r.unit_id for r in requests]
    assert judge.stats.counts["batches"] == 3
    assert judge.stats.counts["prompts"] == 10 == judge.stats.counts["judged"]
    sent = judge.prompts(requests)
    assert judge.stats.counts["prompt_tokens"] == sum(len(p.token_ids) for p in sent)
    one_by_one = judge_for(engine_model, mode="choice", batch_size=1, parse_retries=0)
    alone = [one_by_one.judge([r])[0] for r in requests]
    assert one_by_one.stats.counts["batches"] == 10
    assert [j.label for j in judgments] == [j.label for j in alone]
    p_batched = [j.p_yes for j in judgments]
    assert p_batched == pytest.approx([j.p_yes for j in alone], abs=1e-3)
    assert len({round(p, 4) for p in p_batched}) > 1, "distinct prompts, distinct answers"


@pytest.mark.vllm
@needs_vllm
def test_each_engine_batch_is_handed_over_and_stored_before_the_next_is_generated(
    engine_model: str, tmp_path: Path
) -> None:
    requests = [request(i) for i in range(5)]
    settings = VLLMJudgeSettings(model=engine_model, mode="choice", batch_size=2, **ENGINE)
    judge = VLLMJudge(settings, cache=LLMCache(tmp_path / "llm-cache"))
    heard: list[tuple[int, int]] = []

    def hear(i: int, completion: Completion) -> None:
        heard.append((i, judge.stats.counts["batches"]))

    judge.chat.complete([judge.prompt(r) for r in requests], judge.task.decoding(0), on_result=hear)
    assert heard == [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3)]
    assert judge.stats.counts["cache_stored"] == 5
    again = VLLMJudge(settings, cache=LLMCache(tmp_path / "llm-cache"))
    judgments = again.judge(requests)
    assert [j.unit_id for j in judgments] == [r.unit_id for r in requests]
    assert all(j.cached for j in judgments) and again.stats.counts["batches"] == 0


@pytest.mark.vllm
@needs_vllm
def test_choice_mode_answers_only_yes_or_no(engine_model: str) -> None:
    judge = judge_for(engine_model, mode="choice")
    judgments = judge.judge([request(i) for i in range(12)])
    assert {j.raw for j in judgments} <= {"yes", "no"}
    assert all(j.label == j.raw and j.error is None for j in judgments)
    assert all(0.0 <= j.p_yes <= 1.0 for j in judgments)
    assert all(j.judge == judge.name and ":choice:" in j.judge for j in judgments)
    assert judge.stats.counts["failed"] == 0
    assert judge.stats.counts["label_yes"] + judge.stats.counts["label_no"] == 12


@pytest.mark.vllm
@needs_vllm
def test_logprobs_mode_garbage_fails_after_retries(engine_model: str) -> None:
    requests = [request(i) for i in range(16)]
    judge = judge_for(engine_model, mode="logprobs", parse_retries=2)
    judgments = judge.judge(requests)
    failed = [j for j in judgments if j.failed]
    assert failed, "a random-weight model should answer garbage"
    for judgment in failed:
        assert judgment.error == f"unparseable: {judgment.raw[:80]!r}"
        assert judgment.raw.strip().lower() not in ("yes", "no")
        assert judgment.p_yes is None
    for judgment in judgments:
        if not judgment.failed:
            assert judgment.label == judgment.raw.strip().lower()
            assert judgment.p_yes is None or 0.0 <= judgment.p_yes <= 1.0
    stats = judge.stats
    assert stats.errors["unparseable"] == len(failed) == stats.counts["failed"]
    assert stats.counts["parse_retries"] >= 2 * len(failed)
    assert stats.counts["prompts"] == len(requests) + stats.counts["parse_retries"]
    assert stats.counts["completion_tokens"] == stats.counts["prompts"]


@pytest.mark.vllm
@needs_vllm
def test_no_parse_retries_means_one_ask(engine_model: str) -> None:
    judge = judge_for(engine_model, mode="logprobs", parse_retries=0)
    judgments = judge.judge([request(i) for i in range(6)])
    assert judge.stats.counts["prompts"] == 6
    assert "parse_retries" not in judge.stats.counts
    assert sum(j.failed for j in judgments) == judge.stats.errors["unparseable"]


@pytest.mark.vllm
@needs_vllm
def test_overlong_document_is_cut_to_fit(engine_model: str) -> None:
    long_text = " ".join(f"{s} Paragraph {n}." for n in range(60) for s in SENTENCES)
    question = "Who painted the harbour wall blue in 1931?"
    requests = [request(0), request(1, text=long_text, question=question), request(2)]
    judge = judge_for(engine_model, mode="choice")
    tokenizer = judge.engine.get_tokenizer()
    assert len(tokenizer.encode(long_text, add_special_tokens=False)) > 3 * CONTEXT
    prompts = judge.prompts(requests)
    assert [p.truncated for p in prompts] == [False, True, False]
    cut = prompts[1]
    assert CONTEXT - judge.max_tokens - 8 <= len(cut.token_ids) <= CONTEXT - judge.max_tokens
    shown = tokenizer.decode(cut.token_ids)
    assert "The lighthouse keeper painted the harbour wall" in shown
    assert "Paragraph 59." not in shown
    assert shown.rstrip().endswith("<|assistant|>")
    assert f"Question: {question}\nExpected answer: the lighthouse keeper\n" in shown
    assert "Reply with a single word: yes or no." in shown
    judgments = judge.judge(requests)
    assert [j.label in ("yes", "no") for j in judgments] == [True] * 3
    assert judge.stats.counts["truncated"] == 2
    assert judge.stats.counts["prompt_tokens"] <= 3 * CONTEXT


@pytest.mark.vllm
@needs_vllm
def test_prompt_too_long_without_the_document_fails_alone(engine_model: str) -> None:
    huge_question = "Who " + " ".join(SENTENCES * 40) + "?"
    requests = [request(0), request(1, question=huge_question), request(2)]
    judge = judge_for(engine_model, mode="choice")
    judgments = judge.judge(requests)
    assert judgments[1].failed and judgments[1].error.startswith("prompt too long")
    assert judgments[1].raw == ""
    assert judgments[0].label in ("yes", "no") and judgments[2].label in ("yes", "no")
    assert judge.stats.errors["prompt_too_long"] == 1
    assert judge.stats.counts["prompts"] == 2


@pytest.mark.vllm
@needs_vllm
def test_one_engine_per_process(engine_model: str) -> None:
    first = judge_for(engine_model, mode="logprobs")
    assert judge_for(engine_model, mode="choice").engine is first.engine
    assert first.context_length == CONTEXT
    assert first.settings.window_words() == max_window_words(CONTEXT)
    other = VLLMJudge.of(engine_model, max_model_len=512, enforce_eager=True, dtype="float32")
    with pytest.raises(ConfigError, match="one vLLM engine per process"):
        other.judge([request(0)])


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def vllm_server(vllm_environment: Path, tiny_model: Path) -> Iterator[str]:
    """vLLM's OpenAI-compatible server on the tiny model; yields its base URL."""
    port = free_port()
    log_path = vllm_environment / f"server-{port}.log"
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    command += ["--model", str(tiny_model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--max-model-len", str(CONTEXT), "--enforce-eager", "--dtype", "float32"]
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 240
        while True:
            if server.poll() is not None:
                pytest.fail(f"vLLM server exited: {log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"vLLM server not healthy: {log_path.read_text()[-3000:]}")
                time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.mark.vllm
@needs_vllm
def test_openai_server_answers_under_choice(vllm_server: str, tiny_model: Path) -> None:
    from tipqa.llm.judges.openai import OpenAIJudge, OpenAIJudgeSettings

    settings = OpenAIJudgeSettings(
        model=str(tiny_model), base_url=vllm_server, mode="choice", max_tokens=4
    )
    judge = OpenAIJudge(settings)
    judgments = judge.judge([request(i) for i in range(4)])
    assert [j.label in ("yes", "no") for j in judgments] == [True] * 4
    assert all(j.error is None and j.raw in ("yes", "no") for j in judgments)
