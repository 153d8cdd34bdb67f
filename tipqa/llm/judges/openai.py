"""The relevance judge on an OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp, Ollama).

Three modes. "logprobs" asks for the answer's top log-probabilities too and records P(yes)
when the server returns them (a server that ignores the request still gets its answer read;
the judgments then have no p_yes, counted as `logprobs_missing`). "plain" asks for the answer
only, which every server supports. "choice" adds constrained decoding to exactly yes or no, in
the request field the server reads (`choice_via`, see `tipqa.llm.openai_chat`). Re-asks repeat
the same greedy request.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tipqa.core.errors import ConfigError
from tipqa.core.settings import setting
from tipqa.core.stats import StepStats
from tipqa.llm.chat import ChatModel, Decoding
from tipqa.llm.judges.llm import JudgeTask, LLMJudge
from tipqa.llm.openai_chat import ChoiceVia, OpenAIChatModel, OpenAISettings

MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class OpenAIJudgeSettings(OpenAISettings, JudgeTask):
    """[judge] of the OpenAI-compatible backend.

    `mode`: "logprobs" asks for the answer token's log-probabilities (P(yes) is recorded),
    "choice" also constrains decoding to yes/no (in the request field `choice_via` names),
    "plain" asks for neither (servers that support no logprobs); every mode parses the answer
    strictly. `extra_body`: more request fields for the server (say, thinking off).
    """

    model: str = setting("meta-llama/Llama-3.1-8B-Instruct", doc="the model's name on the server")
    choice_via: ChoiceVia = setting("structured_outputs", doc="the request field of choice")
    extra_body: dict[str, Any] = field(
        default_factory=dict, metadata={"doc": "more request fields (a JSON object)"}
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top_logprobs > MAX_TOP_LOGPROBS:
            raise ConfigError(
                f"openai judge: top_logprobs must be 0..{MAX_TOP_LOGPROBS}, got {self.top_logprobs}"
            )

    def decoding(self, attempt: int) -> Decoding:
        """Greedy, the same on every ask, with the extra request fields."""
        return dataclasses.replace(super().decoding(attempt), extra=self.extra_body)

    def transport(self, stats: StepStats, *, progress: bool = True) -> ChatModel:
        """The server, with constrained choice sent in `choice_via`."""
        return OpenAIChatModel(self.client(stats, progress=progress), self.choice_via)


class OpenAIJudge(LLMJudge):
    """The LLM judge on an OpenAI-compatible server."""
