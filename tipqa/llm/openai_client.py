"""A chat-completions client for OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama).

Requests run in a bounded thread pool; retries are ours (the `openai` client's own are off):
exponential backoff with jitter on timeouts, connection errors, 408, 429 and 5xx. A refused key
(401, 403) raises `CredentialsError` at once: no request after it could succeed. Every call,
retry, failure and token is counted in `stats`. The API key is handed to the `openai` client and
never logged, stored in stats, or put into an error message. Responses are read from their JSON
by `tipqa.llm.chat_response`, which knows each server's shape; a response without token counts
is counted as `usage_missing`.
"""

from __future__ import annotations

import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlparse

import orjson
from tqdm import tqdm

from tipqa.core.errors import ConfigError, CredentialsError, MissingExtraError
from tipqa.core.extras import OPENAI, Extra
from tipqa.core.settings import Settings, knob, setting
from tipqa.core.stats import StepStats
from tipqa.llm.chat_response import ChatReply, read_reply
from tipqa.llm.usage import Usage

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "EMPTY"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
RETRYABLE_STATUS = frozenset({408, 429})
REFUSED_STATUS = frozenset({401, 403})
DETAIL_CHARS = 200

Message = dict[str, str]


@dataclass
class ChatResult:
    """One request's outcome: the answer text and logprobs, or the kind of error that ended it.

    `token_logprobs` are the log-probabilities of the generated tokens themselves (None when the
    server sent none); `top_logprobs` the alternatives the server listed at each position.
    `reasoned_only`: the model wrote reasoning but no answer (a thinking model that ran out of
    `max_tokens`); `finish_reason` is the server's, when it sent one.
    """

    text: str = ""
    top_logprobs: list[list[tuple[str, float]]] = field(default_factory=list)
    token_logprobs: list[float] | None = None
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    error: str | None = None
    detail: str = ""
    finish_reason: str | None = None
    reasoned_only: bool = False

    @property
    def ok(self) -> bool:
        """True when the server answered."""
        return self.error is None

    def describe_error(self) -> str:
        """A one-line error for records: the kind, then the server's message when there is one."""
        return f"{self.error}: {self.detail}" if self.detail else str(self.error)


def is_local_url(url: str) -> bool:
    """True when `url` points at this machine (a local vLLM server needs no real key)."""
    return (urlparse(url).hostname or "") in LOCAL_HOSTS


@dataclass(frozen=True)
class OpenAIServerSettings(Settings):
    """How to reach an OpenAI-compatible server (the part every OpenAI backend shares).

    The model name identifies the model: `base_url` and the knobs change where and how fast
    it is asked, not what it answers, so they are not part of a step's fingerprint.
    """

    model: str = setting("gpt-4o-mini", doc="the model's name on the server")
    base_url: str = knob("", doc="empty: OPENAI_BASE_URL, else OpenAI")
    max_concurrency: int = knob(8, doc="requests in flight at once")
    max_retries: int = knob(5, doc="retries on timeouts, 429 and 5xx")
    timeout: float = knob(60.0, doc="seconds per request")
    backoff_base: float = knob(0.5, doc="seconds before the first retry (doubled each time)")
    backoff_max: float = knob(30.0, doc="the longest wait between retries, in seconds")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.model, str) or not self.model:
            raise ConfigError("openai: a model name is required")
        if self.max_concurrency < 1:
            raise ConfigError(f"openai: max_concurrency must be >= 1, got {self.max_concurrency}")
        if self.max_retries < 0:
            raise ConfigError(f"openai: max_retries must be >= 0, got {self.max_retries}")
        if self.timeout <= 0:
            raise ConfigError(f"openai: timeout must be > 0, got {self.timeout}")

    def backoff_ceiling(self, attempt: int) -> float:
        """The longest wait before retry `attempt` (from 1); its jitter waits half to all of it."""
        return min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))

    def extras(self) -> tuple[Extra, ...]:
        """The `openai` package."""
        return (OPENAI,)

    def client(self, stats: StepStats, *, progress: bool = True) -> OpenAIChatClient:
        """A chat client for this server, counting into `stats` (the key from OPENAI_API_KEY)."""
        return OpenAIChatClient(self, progress=progress, stats=stats)


class OpenAIChatClient:
    """Chat completions at temperature 0 with bounded concurrency, retries and counters.

    `settings.base_url` empty: OPENAI_BASE_URL, else OpenAI; `api_key` None: OPENAI_API_KEY.
    Library callers build one with `OpenAIChatClient.of(model=..., **fields)`.
    """

    def __init__(
        self,
        settings: OpenAIServerSettings,
        *,
        api_key: str | None = None,
        progress: bool = True,
        stats: StepStats | None = None,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise MissingExtraError("openai", "openai") from exc
        self.settings = settings
        self.base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None or not is_local_url(self.base_url):
                raise ConfigError(
                    "openai: no API key; set OPENAI_API_KEY (a server that checks no key "
                    "accepts any placeholder, e.g. OPENAI_API_KEY=EMPTY)"
                )
            key = PLACEHOLDER_KEY
        self._secret = key
        self.progress = progress
        self.stats = stats if stats is not None else StepStats("llm")
        self._lock = threading.Lock()
        self._openai = openai
        self._client = openai.OpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=float(settings.timeout)
        )

    @classmethod
    def of(
        cls,
        *,
        api_key: str | None = None,
        progress: bool = True,
        stats: StepStats | None = None,
        **fields: Any,
    ) -> OpenAIChatClient:
        """A client of the server these `OpenAIServerSettings` fields name (library use)."""
        settings = OpenAIServerSettings(**fields)
        return cls(settings, api_key=api_key, progress=progress, stats=stats)

    @property
    def model(self) -> str:
        """The model's name on the server."""
        return self.settings.model

    def __repr__(self) -> str:
        return f"OpenAIChatClient(model={self.model!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def __enter__(self) -> OpenAIChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def complete_many(
        self,
        batch: Sequence[list[Message]],
        *,
        desc: str = "chat",
        on_result: Callable[[int, ChatResult], None] | None = None,
        **params: Any,
    ) -> list[ChatResult]:
        """One result per message list, in order, with at most `max_concurrency` in flight.

        `on_result(index, result)` is called in the calling thread as each result arrives, so
        that a caller can keep it before the batch is done.
        """
        if not batch:
            return []
        results: list[ChatResult | None] = [None] * len(batch)
        workers = min(self.settings.max_concurrency, len(batch))
        with (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tipqa-openai") as pool,
            tqdm(total=len(batch), desc=desc, disable=not self.progress, leave=False) as bar,
        ):
            futures = {
                pool.submit(self.complete, messages, **params): index
                for index, messages in enumerate(batch)
            }
            try:
                for future in as_completed(futures):
                    index, result = futures[future], future.result()
                    results[index] = result
                    if on_result is not None:
                        on_result(index, result)
                    bar.update(1)
            except BaseException:
                pool.shutdown(cancel_futures=True)
                raise
        return [result for result in results if result is not None]

    def complete(self, messages: list[Message], **params: Any) -> ChatResult:
        """Send one chat request, retrying transient failures; never raises for API errors."""
        self._count("requests")
        attempts = 0
        while True:
            attempts += 1
            self._count("calls")
            try:
                raw = self._client.chat.completions.with_raw_response.create(
                    model=self.model, messages=cast(Any, messages), **{"temperature": 0, **params}
                )
                reply = read_reply(orjson.loads(raw.content))
            except self._openai.OpenAIError as exc:
                kind, retryable, retry_after = self._classify(exc)
                detail = self._redact(_exception_detail(exc))
                if (
                    isinstance(exc, self._openai.APIStatusError)
                    and exc.status_code in REFUSED_STATUS
                ):
                    self._failure(kind, detail, attempts)
                    raise CredentialsError(
                        f"the server at {self.base_url or 'api.openai.com'} refused the API key "
                        f"({kind}: {detail}): set OPENAI_API_KEY to a key it accepts, then run "
                        "the same command again"
                    ) from None
                if retryable and attempts <= self.settings.max_retries:
                    delay = self._backoff(attempts, retry_after)
                    self._count("retries")
                    self._count(f"retries_{kind}")
                    log.debug("openai %s (%s); retry %d in %.2fs", kind, detail, attempts, delay)
                    time.sleep(delay)
                    continue
                return self._failure(kind, detail, attempts)
            except ValueError as exc:
                detail = self._redact(f"unreadable response: {exc}")
                return self._failure("bad_response", detail, attempts)
            return self._result(reply, attempts)

    def _classify(self, exc: Exception) -> tuple[str, bool, float | None]:
        """The error kind, whether it is worth retrying, and the server's Retry-After."""
        openai = self._openai
        if isinstance(exc, openai.APITimeoutError):
            return "timeout", True, None
        if isinstance(exc, openai.APIConnectionError):
            return "connection", True, None
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retryable = status in RETRYABLE_STATUS or status >= 500
            return f"http_{status}", retryable, _retry_after(exc)
        if isinstance(exc, openai.APIResponseValidationError):
            return "bad_response", False, None
        return "api_error", False, None

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential delay with jitter (half fixed, half random), at least the Retry-After."""
        ceiling = self.settings.backoff_ceiling(attempt)
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.settings.backoff_max))
        return delay

    def _result(self, reply: ChatReply, attempts: int) -> ChatResult:
        """Count a server's answer (its tokens, or that it sent none) and wrap it."""
        usage = Usage(*reply.usage) if reply.usage is not None else Usage()
        with self._lock:
            self.stats.add("prompt_tokens", usage.prompt_tokens)
            self.stats.add("completion_tokens", usage.completion_tokens)
            if reply.usage is None:
                self.stats.add("usage_missing")
        return ChatResult(
            text=reply.text,
            top_logprobs=reply.top_logprobs,
            token_logprobs=reply.token_logprobs,
            usage=usage,
            attempts=attempts,
            finish_reason=reply.finish_reason,
            reasoned_only=reply.reasoned_only,
        )

    def _failure(self, kind: str, detail: str, attempts: int) -> ChatResult:
        """Count and log a request that is given up."""
        with self._lock:
            self.stats.error(kind)
        log.warning("openai request failed after %d attempt(s): %s %s", attempts, kind, detail)
        return ChatResult(error=kind, detail=detail, attempts=attempts)

    def _count(self, name: str) -> None:
        with self._lock:
            self.stats.add(name)

    def _redact(self, text: str) -> str:
        """Remove the API key from a message (some servers echo what they were sent)."""
        if self._secret and self._secret != PLACEHOLDER_KEY:
            text = text.replace(self._secret, "***")
        return text[:DETAIL_CHARS]


def _exception_detail(exc: Exception) -> str:
    """The server's error message when it sent one, else the exception text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message")
        if isinstance(body.get("error"), dict):
            message = body["error"].get("message", message)
        if isinstance(message, str) and message:
            return " ".join(message.split())
    return " ".join(str(exc).split())


def _retry_after(exc: Exception) -> float | None:
    """Seconds from a Retry-After header given as a number, if any."""
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None
