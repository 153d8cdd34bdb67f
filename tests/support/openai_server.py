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

`shape` picks how a 200 answer is laid out, after the server it imitates (see
`tipqa.llm.chat_response` for the sources): "openai" (chat-layout logprobs; also vLLM's),
"no-logprobs" (a server that ignores the request field: no `logprobs` key at all, as Ollama
before 0.12.11), "completions-logprobs" (the older `{tokens, token_logprobs, top_logprobs:
[{token: logprob}]}` layout), "no-usage" (no `usage` key), "ollama" (its `fp_ollama`
fingerprint, `logprobs` only when there are some, `reasoning` beside `content`), "llama.cpp"
(`llama-server`: token ids and bytes in the logprobs, `timings`, `top_probs` with probabilities
when asked for `post_sampling_probs`). Constrained decoding is honoured where that server
documents it: `structured_outputs.choice` by "openai" (as vLLM), `grammar` (a GBNF alternation
of quoted words) by "llama.cpp"; the rule's text is then cut to the allowed answer it starts
with, as a constrained decoder would emit it.

A reply may carry `token_logprobs`, the (token, logprob) of each generated token; when the
request asks for logprobs they are sent, one position per token, in the shape's layout.
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
SHAPES = ("openai", "no-logprobs", "completions-logprobs", "no-usage", "ollama", "llama.cpp")
GRAMMAR_WORD = re.compile(r'"([^"]+)"')
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
    reasoning: str = ""


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

    def __init__(
        self,
        rule: Rule = judge_rule,
        *,
        delay: float = 0.0,
        slow_seconds: float = 3.0,
        shape: str = "openai",
    ):
        if shape not in SHAPES:
            raise ValueError(f"unknown shape {shape!r}; known: {', '.join(SHAPES)}")
        self.rule = rule
        self.shape = shape
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
        return 200, completion(body, reply, self.shape)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                """Answer one chat-completions request."""
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:
                    return  # the client went away while sending (killed): nothing was asked
                body = json.loads(raw or b"{}")
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


def constrained(body: dict[str, Any], text: str, shape: str) -> str:
    """The text a constrained decoder would emit, where the imitated server reads a constraint."""
    allowed: list[str] = []
    if shape == "openai":
        allowed = (body.get("structured_outputs") or {}).get("choice") or []
    elif shape == "llama.cpp" and isinstance(body.get("grammar"), str):
        allowed = GRAMMAR_WORD.findall(body["grammar"])
    if not allowed:
        return text
    said = text.strip().lower()
    return next((a for a in allowed if said.startswith(a.lower())), allowed[0])


def alternatives(body: dict[str, Any], reply: Reply, text: str) -> list[tuple[str, float]]:
    """The first answer position's top alternatives, when asked for and the rule has them."""
    if not body.get("logprobs"):
        return []
    if reply.top_logprobs is not None:
        return [(a.get("token"), a.get("logprob")) for a in reply.top_logprobs]
    if reply.yes_probability is None:
        return []
    p = reply.yes_probability
    top = [("yes", 0.9 * p), ("Yes", 0.1 * p), ("no", 1 - p)]
    return [(token, math.log(q)) for token, q in top[: body.get("top_logprobs") or 1]]


Position = tuple[str, float, list[tuple[str, float]]]


def positions(body: dict[str, Any], reply: Reply, text: str) -> list[Position]:
    """(token, its logprob, its top alternatives) per answer position, when asked for."""
    if body.get("logprobs") and reply.token_logprobs is not None:
        listed = body.get("top_logprobs") or 0
        return [(token, lp, [(token, lp)][:listed]) for token, lp in reply.token_logprobs]
    top = alternatives(body, reply, text)
    if not top:
        return []
    return [(text, next((lp for token, lp in top if token == text), top[0][1]), top)]


def chat_logprobs(answered: list[Position], shape: str, body: dict) -> Any:
    """`choices[0].logprobs` in the chat layout (with llama.cpp's and Ollama's extra fields)."""
    content = []
    for text, chosen, top in answered:
        extra: dict[str, Any] = {"bytes": None}
        if shape == "llama.cpp":
            extra = {"id": 0, "bytes": list(text.encode())}
        if shape == "llama.cpp" and body.get("post_sampling_probs"):
            probs = [{"token": t, "prob": math.exp(lp), "id": 0} for t, lp in top]
            entry = {"token": text, "prob": math.exp(chosen), "top_probs": probs, **extra}
        else:
            listed = [{"token": t, "logprob": lp, **extra} for t, lp in top]
            entry = {"token": text, "logprob": chosen, "top_logprobs": listed, **extra}
        content.append(entry)
    layout = {"content": content}
    return layout if shape in ("ollama", "llama.cpp") else {**layout, "refusal": None}


def completion(body: dict[str, Any], reply: Reply, shape: str = "openai") -> dict[str, Any]:
    """A chat.completion object in the wire format of the imitated server."""
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    text = constrained(body, reply.text, shape)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reply.reasoning and shape == "ollama":
        message["reasoning"] = reply.reasoning
    elif reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
    answered = positions(body, reply, text)
    if shape == "completions-logprobs" and answered:
        tokens = [token for token, _, _ in answered]
        choice["logprobs"] = {
            "tokens": tokens,
            "token_logprobs": [chosen for _, chosen, _ in answered],
            "top_logprobs": [dict(top) for _, _, top in answered],
            "text_offset": [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))],
        }
    elif shape != "no-logprobs" and answered:
        choice["logprobs"] = chat_logprobs(answered, shape, body)
    elif shape not in ("no-logprobs", "ollama"):
        choice["logprobs"] = None
    payload: dict[str, Any] = {
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
    if shape == "no-usage":
        del payload["usage"]
    if shape == "ollama":
        payload["system_fingerprint"] = "fp_ollama"
    if shape == "llama.cpp":
        payload["system_fingerprint"] = "b1-tipqa"
        payload["timings"] = {"prompt_n": prompt_tokens, "predicted_n": 1, "cache_n": 0}
    return payload
