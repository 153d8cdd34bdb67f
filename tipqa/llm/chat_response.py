"""Read a chat completion as OpenAI-compatible servers send it, whatever shape they choose.

The servers agree on `choices[0].message.content` and differ in the rest; each documented
shape is read here (the tests serve every one of them):

* log-probabilities in the chat layout, `logprobs.content[i].top_logprobs[j] = {token,
  logprob}` (OpenAI, vLLM, llama.cpp's `llama-server`, Ollama 0.12.11 and later);
* the same with probabilities instead, `{token, prob}` under `top_probs` (llama-server with
  `post_sampling_probs`);
* the older completions layout, `logprobs = {tokens, token_logprobs, top_logprobs: [{token:
  logprob}, ...]}`, which chat responses carried in vLLM until early 2024 (vllm-project/vllm
  issue 3179) and in llama-cpp-python's server until its pull request 1788 (October 2024);
* no log-probabilities at all (a server that ignores the request field, or `logprobs: null`);
* the generated tokens' own log-probabilities, `content[i].logprob` (or `prob`) in the chat
  layout and `token_logprobs` in the completions layout, read only when every position has a
  usable one (a sequence probability from some of its tokens would be too high);
* `usage` missing, null or partial (some servers send none; Ollama counts 0 prompt tokens
  for a cached prompt), reported as `usage=None` so that the caller can count it;
* the answer only in `reasoning_content` / `reasoning` (a thinking model that used up its
  tokens before answering), reported as `reasoned_only`.

Entries that are not what they should be (a token that is not a string, a log-probability
that is not a finite number, a probability of 0) are left out rather than guessed at.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

REASONING_FIELDS = ("reasoning_content", "reasoning")

Alternatives = list[tuple[str, float]]


class UnreadableResponse(ValueError):
    """A 200 response that holds no answer at all (not JSON, or no choice)."""


@dataclass
class ChatReply:
    """What one chat completion said: its text, per-position alternatives, tokens spent.

    `token_logprobs`: the log-probability of each generated token, None when the server sent
    none (or not one for every position).
    """

    text: str
    top_logprobs: list[Alternatives] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    finish_reason: str | None = None
    reasoned_only: bool = False
    token_logprobs: list[float] | None = None


def read_reply(payload: Any) -> ChatReply:
    """The first choice of a chat-completion JSON object; UnreadableResponse if it has none."""
    if not isinstance(payload, Mapping):
        raise UnreadableResponse(f"expected a JSON object, got {type(payload).__name__}")
    choices = payload.get("choices")
    if not isinstance(choices, Sequence) or not choices or not isinstance(choices[0], Mapping):
        raise UnreadableResponse("no choices in the response")
    choice = choices[0]
    message = choice.get("message")
    message = message if isinstance(message, Mapping) else {}
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    reasoning = any(isinstance(message.get(f), str) and message[f] for f in REASONING_FIELDS)
    finish = choice.get("finish_reason")
    return ChatReply(
        text=text,
        top_logprobs=read_logprobs(choice.get("logprobs")),
        usage=read_usage(payload.get("usage")),
        finish_reason=finish if isinstance(finish, str) else None,
        reasoned_only=reasoning and not text.strip(),
        token_logprobs=read_token_logprobs(choice.get("logprobs")),
    )


def read_logprobs(logprobs: Any) -> list[Alternatives]:
    """Top alternatives per answer position, from either layout; [] when there are none."""
    if not isinstance(logprobs, Mapping):
        return []
    content = logprobs.get("content")
    if isinstance(content, Sequence) and not isinstance(content, str):
        return [_chat_position(position) for position in content if isinstance(position, Mapping)]
    top = logprobs.get("top_logprobs")
    if isinstance(top, Sequence) and not isinstance(top, str):
        return [_completions_position(position) for position in top]
    return []


def read_token_logprobs(logprobs: Any) -> list[float] | None:
    """The generated tokens' own log-probabilities, from either layout; None unless all usable."""
    if not isinstance(logprobs, Mapping):
        return None
    content = logprobs.get("content")
    if isinstance(content, Sequence) and not isinstance(content, str):
        chosen = [_chosen(position) for position in content]
    else:
        values = logprobs.get("token_logprobs")
        if not isinstance(values, Sequence) or isinstance(values, str):
            return None
        chosen = [_logprob(value) for value in values]
    if not chosen or any(value is None for value in chosen):
        return None
    return [value for value in chosen if value is not None]


def read_usage(usage: Any) -> tuple[int, int] | None:
    """(prompt tokens, completion tokens), or None when the server did not say both."""
    if not isinstance(usage, Mapping):
        return None
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    return prompt, completion


def _count(value: Any) -> int | None:
    """A token count (a non-negative integer), or None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _chat_position(position: Mapping[str, Any]) -> Alternatives:
    """One position of the chat layout: `top_logprobs` of {token, logprob}, or `top_probs`."""
    alternatives = position.get("top_logprobs")
    if isinstance(alternatives, Sequence) and not isinstance(alternatives, str):
        pairs = [_pair(a.get("token"), a.get("logprob")) for a in _mappings(alternatives)]
    else:
        probabilities = position.get("top_probs")
        if not isinstance(probabilities, Sequence) or isinstance(probabilities, str):
            return []
        pairs = [_pair(a.get("token"), _log(a.get("prob"))) for a in _mappings(probabilities)]
    return [pair for pair in pairs if pair is not None]


def _completions_position(position: Any) -> Alternatives:
    """One position of the completions layout: a {token: logprob} object (or null)."""
    if not isinstance(position, Mapping):
        return []
    pairs = [_pair(token, logprob) for token, logprob in position.items()]
    return [pair for pair in pairs if pair is not None]


def _chosen(position: Any) -> float | None:
    """The log-probability of the token chosen at one chat-layout position (`logprob`/`prob`)."""
    if not isinstance(position, Mapping):
        return None
    if "logprob" in position:
        return _logprob(position.get("logprob"))
    return _log(position.get("prob"))


def _logprob(value: Any) -> float | None:
    """A finite log-probability, as a float; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _mappings(items: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [item for item in items if isinstance(item, Mapping)]


def _log(probability: Any) -> float | None:
    """The log of a probability in (0, 1]; None for anything else."""
    if isinstance(probability, bool) or not isinstance(probability, (int, float)):
        return None
    return math.log(probability) if 0 < probability <= 1 else None


def _pair(token: Any, logprob: Any) -> tuple[str, float] | None:
    """(token, logprob) when both are what they should be, else None."""
    value = _logprob(logprob)
    if not isinstance(token, str) or value is None:
        return None
    return token, value
