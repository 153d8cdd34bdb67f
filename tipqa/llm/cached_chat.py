"""The one LLM cache, at the chat-model seam: every request of every task on every provider.

`CachedChatModel` wraps a transport (`tipqa.llm.chat.ChatModel`), as lm-evaluation-harness's
`CachingLM` wraps a model. A request's key is the SHA-256 of `CACHE_VERSION`, the transport's
`identity()` (provider, model, how it is run), the messages and the `Decoding`, so a change of
model, prompt or decoding never reuses an answer, while knobs (concurrency, batch size, the
server's address) do not count. A batch is looked up at once; its misses go to the transport in
one call, each distinct request once (a batch that repeats a prompt pays for it once), and each
completion is stored as it arrives (`tipqa.llm.cache.StoreOnArrival`: a kill loses no answer
received), unless it failed or the caller's `on_result` refused it (an answer its parser cannot
read): a rerun asks those again. The tasks on top parse every completion, fresh or cached.
Each entry names who asked (the request's `desc`, provider and model), for people who look.

Counted in the transport's stats: `cache_hits` (with the tokens they saved,
`saved_prompt_tokens` and `saved_completion_tokens`), `cache_misses`, `cache_stored`, and the
error `cache_bad_entry` (a stored entry that cannot be read: it is asked again).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from tipqa.llm.cache import LLMCache, StoreOnArrival
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding, Message, OnCompletion
from tipqa.llm.usage import Usage

CACHE_VERSION = 3


def request_key(identity: Mapping[str, Any], messages: list[Message], decoding: Decoding) -> str:
    """Hex SHA-256 of `CACHE_VERSION`, the transport's identity, the messages and the decoding."""
    payload = {
        "version": CACHE_VERSION,
        "chat": dict(identity),
        "messages": messages,
        "decoding": {
            "max_tokens": decoding.max_tokens,
            "temperature": decoding.temperature,
            "seed": decoding.seed,
            "top_logprobs": decoding.top_logprobs,
            "token_logprobs": decoding.token_logprobs,
            "choice": list(decoding.choice),
            "stop": list(decoding.stop),
            "extra": dict(decoding.extra),
        },
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


class CachedChatModel:
    """A chat model that asks its transport only for completions the cache does not hold."""

    def __init__(self, chat: ChatModel, cache: LLMCache) -> None:
        self.chat = chat
        self.cache = cache
        self.provider = chat.provider
        self.model = chat.model
        self.stats = chat.stats

    def __repr__(self) -> str:
        return f"CachedChatModel({self.chat!r}, {self.cache!r})"

    def identity(self) -> dict[str, Any]:
        """The transport's identity."""
        return self.chat.identity()

    def key(self, prompt: ChatPrompt, decoding: Decoding) -> str:
        """The cache key of one request."""
        return request_key(self.identity(), prompt.messages, decoding)

    def complete(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        *,
        desc: str = "chat",
        on_result: OnCompletion | None = None,
    ) -> list[Completion]:
        """One completion per prompt, in order: stored ones first, then the transport's."""
        keys = [self.key(prompt, decoding) for prompt in prompts]
        stored = self.cache.get_many(keys)
        out: list[Completion | None] = [None] * len(prompts)
        misses: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            hit = read_entry(stored[key]) if key in stored else None
            if key in stored and hit is None:
                self.stats.error("cache_bad_entry")
            if hit is None:
                self.stats.add("cache_misses")
                misses.setdefault(key, []).append(i)
                continue
            self.stats.add("cache_hits")
            self.stats.add("saved_prompt_tokens", hit.usage.prompt_tokens)
            self.stats.add("saved_completion_tokens", hit.usage.completion_tokens)
            out[i] = hit
            if on_result is not None:
                on_result(i, hit)
        if misses:
            self._ask(prompts, decoding, list(misses.values()), keys, out, desc, on_result)
        return [completion for completion in out if completion is not None]

    def _ask(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        sent: list[list[int]],
        keys: list[str],
        out: list[Completion | None],
        desc: str,
        on_result: OnCompletion | None,
    ) -> None:
        """Send each distinct missing request once; store each usable completion as it comes."""
        store = StoreOnArrival(self.cache)
        asker = f"{desc}:{self.provider}:{self.model}"

        def take(position: int, completion: Completion) -> None:
            usable = completion.ok
            for i in sent[position]:
                out[i] = completion
                if on_result is not None and on_result(i, completion) is False:
                    usable = False
            if usable:
                store.put(keys[sent[position][0]], asker, entry(completion))

        try:
            fresh = self.chat.complete(
                [prompts[indices[0]] for indices in sent], decoding, desc=desc, on_result=take
            )
        finally:
            self.stats.add("cache_stored", store.close())
        for indices, completion in zip(sent, fresh, strict=True):
            for i in indices:
                out[i] = completion

    def close(self) -> None:
        """Let go of the transport's connections and the cache's."""
        self.chat.close()
        self.cache.close()


def cached(chat: ChatModel, cache: LLMCache | None) -> ChatModel:
    """`chat` behind `cache`, or `chat` itself when there is no cache."""
    return chat if cache is None else CachedChatModel(chat, cache)


def transport_of(chat: ChatModel) -> ChatModel:
    """The transport `chat` asks (itself when it is not behind the cache)."""
    return chat.chat if isinstance(chat, CachedChatModel) else chat


def entry(completion: Completion) -> dict[str, Any]:
    """What is stored of a completion: its text, log-probabilities, flags and usage."""
    return {
        "text": completion.text,
        "top_logprobs": completion.top_logprobs,
        "token_logprobs": completion.token_logprobs,
        "usage": completion.usage.to_dict(),
        "truncated": completion.truncated,
        "reasoned_only": completion.reasoned_only,
    }


def read_entry(value: Mapping[str, Any]) -> Completion | None:
    """The completion a stored entry holds (marked `cached`), or None when it is unreadable."""
    text, top, chosen = value.get("text"), value.get("top_logprobs"), value.get("token_logprobs")
    if not isinstance(text, str) or not isinstance(top, list):
        return None
    try:
        alternatives = [[(str(token), _logprob(lp)) for token, lp in position] for position in top]
        logprobs = None if chosen is None else [_logprob(lp) for lp in chosen]
    except (TypeError, ValueError):
        return None
    return Completion(
        text=text,
        top_logprobs=alternatives,
        token_logprobs=logprobs,
        usage=Usage.from_dict(value.get("usage")),
        truncated=value.get("truncated") is True,
        reasoned_only=value.get("reasoned_only") is True,
        cached=True,
    )


def _logprob(value: Any) -> float:
    """A stored log-probability: JSON has no infinity, so a token that cannot be chosen
    (-inf, as under constrained decoding) is stored as null."""
    return -math.inf if value is None else float(value)
