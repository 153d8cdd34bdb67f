"""The OpenAI-compatible transport: `Decoding` to request fields, `ChatResult` to `Completion`.

Constrained choice goes in the request field the server reads (`choice_via`): vLLM's
`structured_outputs` (vLLM 0.12 and later), its older `guided_choice`, or a GBNF `grammar`
(llama.cpp's `llama-server`). The server counts the tokens, so a prompt too long for its context
is sent whole and comes back as the server's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from tipqa.core.stats import StepStats
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding, OnCompletion
from tipqa.llm.openai_client import ChatResult, OpenAIChatClient, OpenAIServerSettings
from tipqa.llm.settings import LLMSettings

ChoiceVia = Literal["structured_outputs", "guided_choice", "grammar"]


def choice_field(via: ChoiceVia, choice: Sequence[str]) -> dict[str, Any]:
    """The request field that constrains the answer to `choice`, as the server reads it."""
    if via == "grammar":
        return {"grammar": "root ::= " + " | ".join(f'"{option}"' for option in choice)}
    if via == "guided_choice":
        return {"guided_choice": list(choice)}
    return {"structured_outputs": {"choice": list(choice)}}


def request_params(decoding: Decoding, choice_via: ChoiceVia) -> dict[str, Any]:
    """The request's parameters besides model and messages (temperature: 0 unless sampling)."""
    params: dict[str, Any] = {"max_tokens": decoding.max_tokens}
    if decoding.temperature:
        params["temperature"] = decoding.temperature
    if decoding.seed is not None:
        params["seed"] = decoding.seed
    if decoding.stop:
        params["stop"] = list(decoding.stop)
    if decoding.top_logprobs:
        params.update(logprobs=True, top_logprobs=decoding.top_logprobs)
    elif decoding.token_logprobs:
        params["logprobs"] = True
    extra = choice_field(choice_via, decoding.choice) if decoding.choice else {}
    extra.update(decoding.extra)
    if extra:
        params["extra_body"] = extra
    return params


def completion(result: ChatResult) -> Completion:
    """The transport-free form of a server's answer."""
    if not result.ok:
        return Completion(usage=result.usage, error=result.describe_error())
    return Completion(
        text=result.text,
        top_logprobs=result.top_logprobs,
        token_logprobs=result.token_logprobs,
        usage=result.usage,
        reasoned_only=result.reasoned_only,
    )


class OpenAIChatModel:
    """Chat completions on an OpenAI-compatible server (greedy; the client retries)."""

    provider = "openai"

    def __init__(self, client: OpenAIChatClient, choice_via: ChoiceVia = "structured_outputs"):
        self.client = client
        self.model = client.model
        self.stats = client.stats
        self.choice_via = choice_via

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.client.base_url!r})"

    def identity(self) -> dict[str, Any]:
        """The model's name and the request field of constrained choice (not the server's
        address: it says where the model is asked, not what it answers)."""
        return {"provider": self.provider, "model": self.model, "choice_via": self.choice_via}

    def complete(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        *,
        desc: str = "chat",
        on_result: OnCompletion | None = None,
    ) -> list[Completion]:
        """One completion per prompt, in order; `on_result` hears each as it arrives."""

        def take(index: int, result: ChatResult) -> None:
            if on_result is not None:
                on_result(index, completion(result))

        results = self.client.complete_many(
            [prompt.messages for prompt in prompts],
            desc=desc,
            on_result=take,
            **request_params(decoding, self.choice_via),
        )
        return [completion(result) for result in results]

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


class OpenAISettings(OpenAIServerSettings, LLMSettings):
    """Base of the LLM task settings on an OpenAI-compatible server."""

    provider: ClassVar[str] = "openai"

    def transport(self, stats: StepStats, *, progress: bool = True) -> ChatModel:
        """A chat model on this server, counting into `stats` (the key from OPENAI_API_KEY)."""
        return OpenAIChatModel(self.client(stats, progress=progress))
