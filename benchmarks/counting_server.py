"""A local OpenAI-compatible server that answers like the offline rules and counts calls.

It serves the fault-injection benchmark: each prompt is counted, and a request whose answer is
already in the served run's LLM cache is recorded as a repeated call for completed work.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT


def _server_module() -> Any:
    """tests/openai_server.py, imported by path (tests are not a package)."""
    name = "tipqa_bench_openai_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / "openai_server.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class CountingServer:
    """An OpenAI-compatible server answering like the offline rules, counting calls per prompt.

    `cache` names the LLM cache of the run being served; a request whose cache key is already
    stored there is recorded in `repeated_cached`.
    """

    def __init__(self, delay: float = 0.0) -> None:
        module = _server_module()
        self._reply = module.Reply
        self._layout = module.JUDGE_LAYOUT
        self.server = module.FakeOpenAIServer(self._rule, delay=delay)
        self.asked: Counter[str] = Counter()
        self.phase_asked: Counter[str] = Counter()
        self.keys: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.repeated_cached: list[str] = []
        self.cache: Path | None = None
        self.judge_requests = 0
        self.phase_judge_requests = 0
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

    def begin(self, cache: Path) -> None:
        """Start counting a new pipeline start whose LLM cache is `cache`."""
        with self._lock:
            self.cache = cache
            self.phase_asked = Counter()
            self.phase_judge_requests = 0

    def _rule(self, body: dict[str, Any], attempt: int, headers: dict[str, str]) -> Any:
        """Answer a keyword or judge prompt by the offline rules; count it."""
        from tipqa.judges.rules import is_relevant
        from tipqa.keywords.rules import extract_keywords
        from tipqa.records import JudgeRequest, Question

        messages = body.get("messages", [])
        content = messages[-1]["content"] if messages else ""
        match = self._layout.search(content)
        if match is None:
            question = Question("q", content, "", [])
            key = self._key_of("keywords", question)
            reply = self._reply(text=", ".join(extract_keywords(content)))
        else:
            passage, text, answer = match.groups()
            request = JudgeRequest(
                "q", text, answer, [answer], extract_keywords(text), "token", "d", "u", passage
            )
            key = self._key_of("judge", request)
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
            if self._stored(key):
                self.repeated_cached.append(prompt)
        return reply

    def _key_of(self, kind: str, item: Any) -> str:
        """The pipeline's cache key of a keyword question or judge request."""
        from tipqa.components import make_judge, make_keyword_extractor
        from tipqa.config import read_config

        if self._judge is None:
            folder = Path(tempfile.mkdtemp(prefix="tipqa-keys-"))
            config = read_config({"judge": self.settings(), "keywords": self.settings()})
            self._judge = make_judge(config.judge, folder / "judge.sqlite")
            self._extractor = make_keyword_extractor(config.keywords, folder / "keywords.sqlite")
        return (self._judge if kind == "judge" else self._extractor).key(item)

    def _stored(self, key: str) -> bool:
        """True when the served run's LLM cache holds `key`."""
        if self.cache is None or not self.cache.exists():
            return False
        db = sqlite3.connect(f"file:{self.cache}?mode=ro", uri=True, timeout=30)
        try:
            row = db.execute("SELECT 1 FROM llm_cache WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            row = None
        finally:
            db.close()
        return row is not None

    def stored_keys(self, cache: Path) -> set[str]:
        """Every key of an LLM cache file."""
        db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
        try:
            return {row[0] for row in db.execute("SELECT key FROM llm_cache")}
        finally:
            db.close()
