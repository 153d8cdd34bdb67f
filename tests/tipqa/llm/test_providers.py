"""A new LLM provider is one settings class and one registration: it judges, extracts, answers.

The provider here speaks a tiny JSON protocol of its own (not OpenAI's) to a local HTTP server.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tipqa.builder.components import make_answerer, make_judge, make_keyword_extractor
from tipqa.config import Choice
from tipqa.core.errors import ConfigError
from tipqa.core.records import JudgeRequest, Question
from tipqa.core.settings import knob, setting
from tipqa.core.stats import StepStats
from tipqa.llm.answerers.base import ANSWERERS
from tipqa.llm.answerers.llm import LLMAnswerer
from tipqa.llm.cached_chat import CachedChatModel
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding, PromptByPrompt
from tipqa.llm.judges.base import JUDGES
from tipqa.llm.judges.llm import JudgeTask, LLMJudge
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS
from tipqa.llm.providers import ProviderTask, register_provider
from tipqa.llm.settings import LLMSettings
from tipqa.llm.usage import Usage


def reply(request: dict[str, Any]) -> dict[str, Any]:
    """The tiny protocol's answer: keywords after a system message, yes/no to a judge prompt."""
    messages = request["messages"]
    content = messages[-1]["content"]
    if messages[0]["role"] == "system":
        return {"text": "Wren, Marlow Bay", "alternatives": [], "tokens": [len(content), 4]}
    if "Expected answer" in content:
        yes = 0.9 if "Marlow Bay" in content.split("Question:")[0] else 0.2
        text = "yes" if yes > 0.5 else "no"
        alternatives = [[["yes", math.log(yes)], ["no", math.log(1 - yes)]]]
        return {"text": text, "alternatives": alternatives, "tokens": [len(content), 1]}
    return {"text": " Marlow Bay", "alternatives": [], "tokens": [len(content), 2]}


class Handler(BaseHTTPRequestHandler):
    """POST /complete: one JSON request, one JSON reply."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)  # type: ignore[attr-defined]
        data = json.dumps(reply(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


class TinyChatModel(PromptByPrompt):
    """The transport of the tiny protocol: one POST per prompt."""

    provider = "tiny"

    def __init__(self, url: str, model: str, stats: StepStats) -> None:
        self.url, self.model, self.stats = url, model, stats

    def identity(self) -> dict[str, Any]:
        """The model (the server's address says where it is asked, not what it answers)."""
        return {"provider": self.provider, "model": self.model}

    def complete_one(self, prompt: ChatPrompt, decoding: Decoding) -> Completion:
        """One POST to the server's `/complete`."""
        body = {"model": self.model, "messages": prompt.messages, "limit": decoding.max_tokens}
        request = urllib.request.Request(
            f"{self.url}/complete",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            data = json.loads(response.read())
        self.stats.add("calls")
        top = [[(token, logprob) for token, logprob in at] for at in data["alternatives"]]
        return Completion(data["text"], top, None, Usage(*data["tokens"]))


@dataclass(frozen=True)
class TinySettings(LLMSettings):
    """The tiny protocol's server: its model and address."""

    provider: ClassVar[str] = "tiny"
    model: str = setting("tiny-model", doc="the model the server runs")
    url: str = knob("", doc="the server's address")

    def transport(self, stats: StepStats, *, progress: bool = True) -> ChatModel:
        """The tiny transport to `url`."""
        return TinyChatModel(self.url, self.model, stats)


@pytest.fixture
def tiny() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The server (its address and the requests it got), with the provider registered."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    register_provider("tiny", TinySettings)
    try:
        yield f"http://127.0.0.1:{server.server_port}", server.requests  # type: ignore[attr-defined]
    finally:
        for registry in (JUDGES, KEYWORD_EXTRACTORS, ANSWERERS):
            registry.remove("tiny")
        server.shutdown()
        server.server_close()


def judge_request(text: str, index: int) -> JudgeRequest:
    """A request about the schooner Wren."""
    return JudgeRequest(
        question_id=f"q{index}",
        question="Where did the schooner Wren run aground?",
        answer="Marlow Bay",
        aliases=["Marlow Bay"],
        keywords=["Wren"],
        stage="token",
        doc_id=f"d{index}",
        unit_id=f"d{index}#0",
        text=text,
    )


def test_one_registration_judges_extracts_and_answers(tiny, tmp_path: Path) -> None:
    url, requests = tiny
    cache = tmp_path / "llm-cache"
    for registry in (JUDGES, KEYWORD_EXTRACTORS, ANSWERERS):
        assert registry.check("tiny") == []
    settings = JUDGES.parse("tiny", "judge", {"url": url, "mode": "choice"})
    judge = make_judge(Choice("tiny", settings), cache)
    assert isinstance(judge.chat, CachedChatModel)
    texts = ["The Wren ran aground off Marlow Bay.", "Nothing here."]
    yes, no = judge.judge([judge_request(text, i) for i, text in enumerate(texts)])
    assert (yes.label, no.label) == ("yes", "no")
    assert yes.p_yes == pytest.approx(0.9) and no.p_yes == pytest.approx(0.2)
    assert yes.judge.startswith("tiny:tiny-model:")
    assert judge.judge([judge_request(texts[0], 0)])[0].cached

    keyword_settings = KEYWORD_EXTRACTORS.parse("tiny", "keywords", {"url": url})
    extractor = make_keyword_extractor(Choice("tiny", keyword_settings), cache)
    assert isinstance(extractor.chat, CachedChatModel)
    question = Question("q0", "Where did the schooner Wren run aground near Marlow Bay?", "a", [])
    [keywords] = extractor.extract([question])
    assert keywords.keywords == ["Wren", "Marlow Bay"] and keywords.error is None

    answerer = make_answerer(
        Choice("tiny", ANSWERERS.parse("tiny", "evaluate.tiny", {"url": url})), cache
    )
    answers = answerer.answer(["Where did the Wren run aground?"])
    assert [a.text for a in answers] == ["Marlow Bay"]
    assert answerer.stats.counts["cache_stored"] == 1
    again = answerer.answer(["Where did the Wren run aground?"])
    assert again[0].cached and len(requests) == 4


@dataclass(frozen=True)
class TinyJudgeSettings(TinySettings, JudgeTask):
    """A judge task of the tiny provider with a field of its own: a one-token answer."""

    max_tokens: int = setting(1, doc="tokens of the answer")


class TinyJudge(LLMJudge):
    """The tiny provider's own judge."""


@dataclass(frozen=True)
class KnowingSettings(TinySettings):
    """A tiny provider whose settings know the judge window that fits its context."""

    def window_words(self) -> int:
        """A small context."""
        return 100


def test_a_task_given_is_registered_and_the_others_derived() -> None:
    judge = ProviderTask(TinyJudge, f"{__name__}:TinyJudgeSettings")
    register_provider("tiny-own", TinySettings, judge=judge)
    register_provider("tiny-knowing", KnowingSettings)
    try:
        assert JUDGES.resolve("tiny-own") is TinyJudge
        assert JUDGES.settings_class("tiny-own") is TinyJudgeSettings
        assert JUDGES.parse("tiny-own", "judge", {}).max_tokens == 1
        assert KEYWORD_EXTRACTORS.settings_class("tiny-own").__name__ == "TinySettingsKeywordTask"
        assert ANSWERERS.resolve("tiny-own") is LLMAnswerer
        assert JUDGES.has("tiny-knowing", "knows_context")
        assert not JUDGES.has("tiny-own", "knows_context")
        for registry in (JUDGES, KEYWORD_EXTRACTORS, ANSWERERS):
            assert registry.check("tiny-own") == [] and registry.check("tiny-knowing") == []
    finally:
        for registry in (JUDGES, KEYWORD_EXTRACTORS, ANSWERERS):
            registry.remove("tiny-own")
            registry.remove("tiny-knowing")
    with pytest.raises(ConfigError, match="'lone': no settings class for its keywords, answerer"):
        register_provider("lone", judge=judge)
    assert "lone" not in JUDGES.names


def test_the_built_in_providers_are_registered_through_register_provider() -> None:
    vllm_judge = ProviderTask(
        "tipqa.llm.judges.vllm:VLLMJudge",
        "tipqa.llm.judges.vllm:VLLMJudgeSettings",
        capabilities=("knows_context",),
    )
    keywords = ProviderTask(
        "tipqa.llm.keywords.vllm:VLLMKeywordExtractor",
        "tipqa.llm.keywords.vllm:VLLMKeywordSettings",
    )
    answerer = ProviderTask(
        "tipqa.llm.answerers.vllm:VLLMAnswerer", "tipqa.llm.answerers.vllm:VLLMAnswererSettings"
    )
    register_provider("vllm", judge=vllm_judge, keywords=keywords, answerer=answerer)
    assert JUDGES.has("vllm", "knows_context") and not JUDGES.has("openai", "knows_context")
    with pytest.raises(ConfigError, match="'vllm' is already registered"):
        register_provider("vllm", TinySettings)


def test_choosing_a_backend_imports_no_provider_package() -> None:
    code = (
        "import json, sys\n"
        "from tipqa.llm.judges.base import JUDGES\n"
        "from tipqa.llm.answerers.base import ANSWERERS\n"
        "JUDGES.parse('rules', 'judge', {})\n"
        "imported = sorted({'openai', 'vllm'} & set(sys.modules))\n"
        "print(json.dumps([ANSWERERS.names, JUDGES.names, imported]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [["openai", "vllm"], ["openai", "rules", "vllm"], []]
