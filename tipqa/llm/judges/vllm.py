"""The relevance judge on vLLM's offline engine: one engine per process, batched, strict answers.

Two modes. "logprobs" generates one token greedily and reads P(yes) / P(no) from the top
logprobs of that position ("yes", " yes", "Yes", ... all count). "choice" constrains decoding to
exactly "yes" or "no" (structured outputs); its probabilities are then renormalised over the
allowed tokens, so p_yes is P(yes | the answer is yes or no).

A document that would overflow the context is cut (by tokens, from the end) to fit, while the
instruction, question and answer stay whole (`tipqa.llm.vllm_chat`). An answer that is not
exactly yes/no is asked again (only those requests) with seeded sampling, since a greedy re-ask
would repeat itself; what stays unparseable becomes a failed judgment, never a "no".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tipqa.core.errors import ConfigError
from tipqa.core.records import JudgeRequest
from tipqa.core.settings import setting
from tipqa.llm.chat import ANSWERS, Decoding
from tipqa.llm.judges.llm import JudgeTaskBase, LLMJudge
from tipqa.llm.prompts import PromptTemplate
from tipqa.llm.vllm_chat import Prompt, VLLMChatModel, VLLMEngineSettings

TOP_LOGPROBS = 10
RETRY_TEMPERATURE = 1.0
WORDS_PER_TOKEN = 0.23
PROMPT_RESERVE_TOKENS = 512


def max_window_words(max_model_len: int) -> int:
    """Judge-window word limit for a context of `max_model_len` tokens (paper: 30k for 128k).

    Whitespace words are counted at a conservative 0.23 words per token after keeping room for
    the instruction, question, answer and chat markup (512 tokens, or half of a small context).
    """
    if max_model_len < 2:
        raise ConfigError(f"max_model_len must be at least 2 tokens, got {max_model_len}")
    reserve = min(PROMPT_RESERVE_TOKENS, max_model_len // 2)
    words = int((max_model_len - reserve) * WORDS_PER_TOKEN)
    if words < 1:
        raise ConfigError(f"max_model_len {max_model_len} leaves no room for a judge window")
    return words


@dataclass(frozen=True)
class VLLMJudgeSettings(VLLMEngineSettings, JudgeTaskBase):
    """[judge] of the vLLM offline-engine backend.

    The answer is one token (`decoding`), so there is no `max_tokens` or `top_logprobs` to set,
    and no "plain" mode. `parse_retries` defaults to 1, not 2: on this deterministic engine a
    greedy re-ask would repeat itself, so a re-ask samples (seeded, at temperature 1), and each
    further draw more often records a sampled label where a failed judgment (counted, never a
    "no") would say the model gave no answer. In "choice" mode decoding is constrained to yes or
    no, so no re-ask happens there at all.
    """

    mode: Literal["logprobs", "choice"] = setting("logprobs", doc="logprobs or choice")
    parse_retries: int = setting(1, doc="seeded re-asks of an answer other than yes or no")
    seed: int = setting(0, doc="seed of the re-asks and the engine")

    def decoding(self, attempt: int) -> Decoding:
        """Greedy on the first ask, seeded sampling on re-asks; constrained in choice mode."""
        max_tokens = max(len(c.encode()) for c in ANSWERS) + 1 if self.constrained else 1
        sampled: dict[str, Any] = {}
        if attempt:
            sampled = {"temperature": RETRY_TEMPERATURE, "seed": self.seed + attempt}
        return Decoding(
            max_tokens=max_tokens,
            top_logprobs=TOP_LOGPROBS,
            choice=ANSWERS if self.constrained else (),
            **sampled,
        )

    def tag(self, template: PromptTemplate) -> str:
        """The judge's name in records: provider, model, mode and the template's short hash."""
        return f"{self.provider}:{self.model}:{self.mode}:{template.short_hash}"

    def context_length(self) -> int:
        """`max_model_len`, else the model's own context length from its config (no weights)."""
        if self.max_model_len is not None:
            return self.max_model_len
        from transformers import AutoConfig

        try:
            config = AutoConfig.from_pretrained(self.model)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"vllm judge: cannot read the configuration of {self.model!r} ({exc}); "
                "set [judge] max_model_len"
            ) from exc
        length = getattr(config, "max_position_embeddings", None)
        if not isinstance(length, int) or length < 2:
            raise ConfigError(
                f"vllm judge: {self.model!r} declares no context length; set [judge] max_model_len"
            )
        return length

    def window_words(self) -> int:
        """The judge-window word limit that fits this judge's context."""
        return max_window_words(self.context_length())


class VLLMJudge(LLMJudge):
    """The LLM judge running a chat model in-process on vLLM's offline engine."""

    transport: VLLMChatModel

    @classmethod
    def of(cls, model: str, **settings: Any) -> VLLMJudge:
        """The judge of `model`, with `VLLMJudgeSettings(**settings)` (library use)."""
        return cls(VLLMJudgeSettings(model=model, **settings))

    @property
    def engine(self) -> Any:
        """The process's `vllm.LLM` engine for this judge's model (started on first use)."""
        return self.transport.engine

    @property
    def context_length(self) -> int:
        """The engine's context length in tokens (the configured one, else the model's)."""
        return self.transport.context_length

    def prompts(self, requests: Sequence[JudgeRequest]) -> list[Prompt]:
        """Every request's prompt as the engine gets it (documents that overflow are cut)."""
        return self.transport.encode([self.prompt(r) for r in requests], self.max_tokens)
