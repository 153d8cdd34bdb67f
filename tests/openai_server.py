"""A real local HTTP server speaking the OpenAI chat-completions API, for tests.

It listens on 127.0.0.1 at a random port, records every request (body and headers) and the most
requests it had in flight at once, and answers by a rule: a function of the request body and of
how many times this exact prompt was asked before. The default rule plays a relevance judge on
the `judge-v1` layout ("yes" when the passage contains the expected answer) and obeys markers
written into the prompt, so one batch can mix behaviours:

    [[429:N]]  the first N asks answer HTTP 429 (N=99: always)
    [[500:N]]  the first N asks answer HTTP 500
    [[401:N]]  the first N asks answer HTTP 401, echoing the Authorization header it got
    [[slow:N]] the first N asks answer after `slow_seconds` (beyond a short client timeout)
    [[garbage:N]] / [[empty:N]]  the first N asks answer "maybe" / ""

A reply may carry `token_logprobs`, the (token, logprob) of each generated token, sent when the
request asks for logprobs.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKER = re.compile(r"\[\[(\w+):(\d+)\]\]")
JUDGE_LAYOUT = re.compile(r"Passage:\n(.*)\n\nQuestion: (.*)\nExpected answer: (.*?)\n", re.S)


@dataclass
class Reply:
    """What the server sends back for one request."""

    text: str = ""
    status: int = 200
    delay: float = 0.0
    message: str = ""
    yes_probability: float | None = None
    top_logprobs: list[dict[str, Any]] | None = None
    token_logprobs: list[tuple[str, float]] | None = None
    body: bytes | None = None


Rule = Callable[[dict[str, Any], int, dict[str, str]], Reply]


def last_user_message(body: dict[str, Any]) -> str:
    """The content of the last user message of a chat request."""
    users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


def marker_reply(content: str, attempt: int, headers: dict[str, str]) -> Reply | None:
    """The reply a marker in `content` asks for on this attempt (1-based), if any."""
    for kind, count in MARKER.findall(content):
        if attempt > int(count):
            continue
        if kind in ("429", "500"):
            return Reply(status=int(kind), message=f"injected {kind}")
        if kind == "401":
            return Reply(status=401, message=f"bad key {headers.get('authorization', '')}")
        if kind == "slow":
            return Reply(text="yes", delay=-1.0)
        if kind == "garbage":
            return Reply(text="maybe")
        if kind == "empty":
            return Reply(text="")
    return None


def judge_rule(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> Reply:
    """Answer like a judge: "yes" when the passage contains the expected answer, else "no"."""
    content = last_user_message(body)
    injected = marker_reply(content, attempt, headers)
    if injected is not None:
        return injected
    match = JUDGE_LAYOUT.search(content)
    if match is None:
        return Reply(text="I cannot tell.")
    passage, _, answer = match.groups()
    label = "yes" if answer.strip().lower() in passage.lower() else "no"
    return Reply(text=label, yes_probability=0.8 if label == "yes" else 0.3)


class FakeOpenAIServer:
    """The server; use as a context manager or call start() / stop()."""

    def __init__(self, rule: Rule = judge_rule, *, delay: float = 0.0, slow_seconds: float = 3.0):
        self.rule = rule
        self.delay = delay
        self.slow_seconds = slow_seconds
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.statuses: Counter[int] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._asked: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The `/v1` URL to give an OpenAI client."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        """How many chat requests arrived."""
        return len(self.bodies)

    def reset(self) -> None:
        """Forget the recorded requests (attempt counts per prompt are kept)."""
        with self._lock:
            self.bodies.clear()
            self.headers.clear()
            self.statuses.clear()
            self.max_in_flight = 0

    def start(self) -> FakeOpenAIServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (slow replies in progress are cut short)."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        """Record the request, apply the rule, and build the status and JSON body."""
        prompt = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode())
        with self._lock:
            self.bodies.append(body)
            self.headers.append(headers)
            self._asked[prompt.hexdigest()] += 1
            attempt = self._asked[prompt.hexdigest()]
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self.rule(body, attempt, headers)
            wait = self.slow_seconds if reply.delay < 0 else reply.delay + self.delay
            if wait:
                self._stopping.wait(wait)
        finally:
            with self._lock:
                self.in_flight -= 1
        with self._lock:
            self.statuses[reply.status] += 1
        if reply.body is not None:
            return reply.status, reply.body
        if reply.status != 200:
            return reply.status, {"error": {"message": reply.message, "type": "test"}}
        return 200, completion(body, reply)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                """Answer one chat-completions request."""
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                if not self.path.endswith("/chat/completions"):
                    status, payload = 404, {"error": {"message": "not found"}}
                else:
                    status, payload = server._answer(body, headers)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output quiet."""
                return

        return Handler


def completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """A chat.completion object in the OpenAI wire format."""
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.text},
        "finish_reason": "stop",
        "logprobs": None,
    }
    if body.get("logprobs") and reply.token_logprobs is not None:
        listed = body.get("top_logprobs") or 0
        choice["logprobs"] = {
            "content": [
                {
                    "token": token,
                    "logprob": logprob,
                    "bytes": None,
                    "top_logprobs": [{"token": token, "logprob": logprob, "bytes": None}][:listed],
                }
                for token, logprob in reply.token_logprobs
            ]
        }
    elif body.get("logprobs") and reply.top_logprobs is not None:
        entry = {"token": reply.text, "logprob": 0.0, "top_logprobs": reply.top_logprobs}
        choice["logprobs"] = {"content": [entry]}
    elif body.get("logprobs") and reply.yes_probability is not None:
        p = reply.yes_probability
        top = [("yes", 0.9 * p), ("Yes", 0.1 * p), ("no", 1 - p)]
        alternatives = [
            {"token": token, "logprob": math.log(q), "bytes": None}
            for token, q in top[: body.get("top_logprobs") or 1]
        ]
        choice["logprobs"] = {
            "content": [
                {
                    "token": reply.text,
                    "logprob": math.log(p if reply.text == "yes" else 1 - p),
                    "bytes": None,
                    "top_logprobs": alternatives,
                }
            ]
        }
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 1,
            "total_tokens": prompt_tokens + 1,
        },
    }
