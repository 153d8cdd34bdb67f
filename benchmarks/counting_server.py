"""A local OpenAI-compatible server that answers like the offline rules and counts calls.

It serves the fault-injection benchmark: each prompt is counted with the moments it was
answered, and a request whose answer is already in the served run's LLM cache is recorded as a
repeated call for completed work.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import support_module
from tipqa.llm.cache import LLMCache


class CountingServer:
    """An OpenAI-compatible server answering like the offline rules, counting calls per prompt.

    `cache` names the LLM cache of the run being served; a request whose cache key is already
    stored there is recorded in `repeated_cached`.
    """

    def __init__(self, delay: float = 0.0) -> None:
        module = support_module("openai_server")
        self._reply = module.Reply
        self._layout = module.JUDGE_LAYOUT
        self.server = module.FakeOpenAIServer(self._rule, delay=delay)
        self.asked: Counter[str] = Counter()
        self.phase_asked: Counter[str] = Counter()
        self.keys: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.repeated_cached: list[str] = []
        self.answered: dict[tuple[Path | None, str], list[float]] = {}
        self.cache: Path | None = None
        self.judge_requests = 0
        self.phase_judge_requests = 0
        self.stall_after: int | None = None
        self.stalled_since: float | None = None
        self._arrived = 0
        self._phase = 0
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._judge: Any = None
        self._extractor: Any = None

    @property
    def base_url(self) -> str:
        """The server's /v1 URL."""
        return self.server.base_url

    def __enter__(self) -> CountingServer:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def settings(self) -> dict[str, str]:
        """The [keywords] (and, with `cache`, the [judge]) settings that send calls here."""
        return {"backend": "openai", "model": "x", "base_url": self.base_url}

    def begin(self, cache: Path, *, stall_after: int | None = None) -> None:
        """Start counting a new pipeline start whose LLM cache is `cache`.

        With `stall_after`, judge requests after the first `stall_after` of this start get no
        answer until the next `begin` (and then an error, uncounted): a batch that can never
        finish, so that a kill finds answers received but the batch not done.
        """
        with self._lock:
            self.cache = cache
            self.phase_asked = Counter()
            self.phase_judge_requests = 0
            self.stall_after, self.stalled_since, self._arrived = stall_after, None, 0
            self._phase += 1
            self._release.set()
            self._release = threading.Event()

    def _stalled(self) -> bool:
        """Hold a judge request past `stall_after`; True when its start has ended meanwhile."""
        with self._lock:
            self._arrived += 1
            if self.stall_after is None or self._arrived <= self.stall_after:
                return False
            phase, release = self._phase, self._release
            self.stalled_since = self.stalled_since or time.monotonic()
        release.wait(timeout=300)
        return phase != self._phase

    def _rule(self, body: dict[str, Any], attempt: int, headers: dict[str, str]) -> Any:
        """Answer a keyword or judge prompt by the offline rules; count it."""
        from tipqa.core.records import JudgeRequest
        from tipqa.llm.judges.rules import is_relevant
        from tipqa.llm.keywords.rules import extract_keywords

        messages = body.get("messages", [])
        content = messages[-1]["content"] if messages else ""
        match = self._layout.search(content)
        if match is not None and self._stalled():
            return self._reply(status=503, message="held past the end of its start")
        key = self._key_of("keywords" if match is None else "judge", messages)
        if match is None:
            reply = self._reply(text=", ".join(extract_keywords(content)))
        else:
            passage, text, answer = match.groups()
            request = JudgeRequest(
                "q", text, answer, [answer], extract_keywords(text), "token", "d", "u", passage
            )
            label = "yes" if is_relevant(request) else "no"
            reply = self._reply(text=label, yes_probability=0.8 if label == "yes" else 0.3)
        prompt = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        with self._lock:
            self.judge_requests += match is not None
            self.phase_judge_requests += match is not None
            self.asked[prompt] += 1
            self.phase_asked[prompt] += 1
            self.keys[prompt] = key
            self.kinds[prompt] = "keywords" if match is None else "judge"
            self.answered.setdefault((self.cache, prompt), []).append(time.monotonic())
            if self._stored(key):
                self.repeated_cached.append(prompt)
        return reply

    def _key_of(self, kind: str, messages: list[dict[str, str]]) -> str:
        """The pipeline's cache key of a keyword or judge request with these messages."""
        from tipqa.builder.components import make_judge, make_keyword_extractor
        from tipqa.config import read_config
        from tipqa.llm.chat import ChatPrompt

        if self._judge is None:
            folder = Path(tempfile.mkdtemp(prefix="tipqa-keys-"))
            config = read_config({"judge": self.settings(), "keywords": self.settings()})
            self._judge = make_judge(config.judge, folder)
            self._extractor = make_keyword_extractor(config.keywords, folder)
        prompt = ChatPrompt(messages)
        if kind == "judge":
            return str(self._judge.chat.key(prompt, self._judge.task.decoding(0)))
        return str(self._extractor.chat.key(prompt, self._extractor.decoding))

    def _stored(self, key: str) -> bool:
        """True when the served run's LLM cache holds `key`."""
        if self.cache is None or not self.cache.exists():
            return False
        with LLMCache(self.cache) as cache:
            return cache.get(key) is not None

    def resent(self, cache: Path) -> dict[str, int]:
        """Prompts of the run of `cache` sent more than once (answered or not), and the extra
        requests they cost."""
        again = [len(moments) for (run, _), moments in self.answered.items() if run == cache]
        again = [count for count in again if count > 1]
        return {"prompts": len(again), "requests": sum(again) - len(again)}

    def answered_then_lost(self, cache: Path, kills: list[float], margin: float) -> list[dict]:
        """Prompts of the run of `cache` answered more than `margin` s before a kill and asked
        again after it (answers received and not kept: the client had time to keep them), with
        their kind and how long before the kill each was answered."""
        lost = []
        for (run, prompt), moments in self.answered.items():
            if run != cache:
                continue
            for answered, again in itertools.pairwise(moments):
                kill = next((k for k in kills if answered < k < again), None)
                if kill is not None and answered < kill - margin:
                    lost.append({"kind": self.kinds[prompt], "before_kill_s": kill - answered})
        return lost

    def stored_keys(self, cache: Path) -> set[str]:
        """Every key of an LLM cache (all its files)."""
        with LLMCache(cache) as store:
            return store.keys()
