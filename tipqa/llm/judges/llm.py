"""The relevance judge on any LLM provider: template, strict yes/no, re-asks, P(yes), records.

The provider is what the settings build (`LLMSettings.chat_model`: the transport, behind the LLM
cache when one is given); this module knows nothing of
servers or engines. An answer other than exactly yes or no is asked again (only those requests,
with the decoding the settings give for a re-ask); what stays unparseable becomes a failed
judgment, never a "no". P(yes) is `tipqa.llm.chat.p_yes` over the answer's top log-probabilities,
prefixes counting under constrained choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from tipqa.core.errors import ConfigError
from tipqa.core.records import JudgeRequest, Judgment, Relevance
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.llm.cache import LLMCache
from tipqa.llm.cached_chat import transport_of
from tipqa.llm.chat import (
    ANSWERS,
    RAW_CHARS,
    ChatPrompt,
    Completion,
    Decoding,
    Message,
    p_yes,
)
from tipqa.llm.judges.base import JUDGE_SLOTS
from tipqa.llm.judges.parsing import parse_yes_no
from tipqa.llm.prompts import PromptTemplate, load_template
from tipqa.llm.settings import LLMTaskSettings

REASONING_HINT = (
    "the model wrote reasoning but no answer: raise max_tokens or turn its thinking off"
)


class JudgeSettings(LLMTaskSettings, Protocol):
    """What an LLM judge reads of its settings (an `LLMSettings` with these members)."""

    @property
    def parse_retries(self) -> int:
        """Re-asks of an answer other than yes or no."""
        ...

    @property
    def constrained(self) -> bool:
        """Whether decoding is constrained to yes or no (P(yes) then counts prefixes)."""
        ...

    def decoding(self, attempt: int) -> Decoding:
        """The decoding of the first ask (attempt 0) and of each re-ask."""
        ...


def p_yes_note(constrained: bool) -> str:
    """How P(yes) is read, for the stats."""
    if constrained:
        return "renormalised over the allowed answers yes/no (constrained choice)"
    return "P(yes)/(P(yes)+P(no)) over the top logprobs of the answer token"


class LLMJudge:
    """Asks a chat model whether a text suffices to answer a question; strict yes/no parsing.

    With `cache` the chat model goes behind the LLM cache (`tipqa.llm.cached_chat`); an answer
    other than yes or no is not kept there, so that its re-ask, and a rerun, ask again.
    """

    stats: StepStats

    def __init__(
        self, settings: JudgeSettings, *, cache: LLMCache | None = None, progress: bool = True
    ) -> None:
        self.settings = settings
        self.task = settings
        self.template = load_template(settings.prompt)
        self.template.require_slots(*JUDGE_SLOTS)
        self.model = settings.model
        self.name = settings.tag(self.template)
        self.prompt_sha256 = self.template.sha256
        self.parse_retries = settings.parse_retries
        self.stats = StepStats("judge")
        self.stats.info.update(
            model=self.model,
            prompt=self.template.name,
            prompt_sha256=self.template.sha256,
            p_yes=p_yes_note(settings.constrained),
        )
        self.chat = settings.chat_model(self.stats, cache=cache, progress=progress)
        self.transport = transport_of(self.chat)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, chat={self.chat!r})"

    @property
    def max_tokens(self) -> int:
        """Tokens of an answer at most."""
        return self.task.decoding(0).max_tokens

    def messages(self, request: JudgeRequest, document: str | None = None) -> list[Message]:
        """The chat messages sent for one request (with `document` in place of its text)."""
        return user_message(self.template, request, request.text if document is None else document)

    def prompt(self, request: JudgeRequest) -> ChatPrompt:
        """One request's prompt; its document is what may be cut to fit a context."""
        return ChatPrompt(
            self.messages(request),
            cuttable=request.text,
            cut=lambda document: self.messages(request, document),
        )

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request, in order; failures have `label=None` and an error."""
        prompts = [self.prompt(request) for request in requests]
        judgments: list[Judgment | None] = [None] * len(requests)
        pending = list(range(len(requests)))
        for attempt in range(self.parse_retries + 1):
            if not pending:
                break
            if attempt:
                self.stats.add("parse_retries", len(pending))
            asked, last = pending, attempt == self.parse_retries
            decoding = self.task.decoding(attempt)

            def take(
                position: int,
                result: Completion,
                asked: list[int] = asked,
                last: bool = last,
                decoding: Decoding = decoding,
            ) -> bool:
                i = asked[position]
                label = parse_yes_no(result.text) if result.ok else None
                if label is not None or last or not result.ok:
                    judgments[i] = self._judgment(requests[i], result, label, decoding)
                return label is not None

            self.chat.complete(
                [prompts[i] for i in asked],
                decoding,
                desc="judge (re-ask)" if attempt else "judge",
                on_result=take,
            )
            pending = [i for i in asked if judgments[i] is None]
        return [judgment for judgment in judgments if judgment is not None]

    def close(self) -> None:
        """Let go of the transport's connections and the LLM cache's."""
        self.chat.close()

    def _judgment(
        self, request: JudgeRequest, result: Completion, label: Relevance | None, decoding: Decoding
    ) -> Judgment:
        """Build the record and count the outcome."""
        error = None
        probability = None
        if not result.ok:
            error = result.error
        elif label is None:
            error = f"unparseable: {result.text[:RAW_CHARS]!r}"
            if result.reasoned_only:
                error = f"{error} ({REASONING_HINT})"
            self.stats.error("unparseable")
        else:
            probability = p_yes(result.top_logprobs, prefixes=bool(decoding.choice))
            if decoding.top_logprobs and not result.top_logprobs:
                self.stats.add("logprobs_missing")
        self.stats.add("judged")
        self.stats.add(f"label_{label}" if label else "failed")
        return Judgment.of(
            request,
            label=label,
            raw=result.text,
            judge=self.name,
            error=error,
            p_yes=probability,
            cached=result.cached,
        )


@dataclass(frozen=True)
class JudgeTaskBase(Settings):
    """[judge] fields every LLM judge shares: the prompt, the mode and the re-asks.

    `mode`: "logprobs" asks for the answer's top log-probabilities (P(yes) is recorded),
    "choice" also constrains the answer to yes or no, "plain" asks for neither; every mode
    parses the answer strictly.
    """

    prompt: str = setting("judge-v1", doc="a shipped template or a file")
    mode: Literal["logprobs", "choice", "plain"] = setting(
        "logprobs", doc="logprobs, choice (constrained yes/no) or plain"
    )
    parse_retries: int = setting(2, doc="re-asks of an answer other than yes or no")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.parse_retries < 0:
            raise ConfigError(f"judge: parse_retries must be >= 0, got {self.parse_retries}")

    @property
    def constrained(self) -> bool:
        """Whether decoding is constrained to yes or no."""
        return self.mode == "choice"


@dataclass(frozen=True)
class JudgeTask(JudgeTaskBase):
    """[judge] fields of an LLM judge on a server or a registered provider (a provider's settings
    add how to reach the model): the shared ones, the answer's length and the logprobs read."""

    max_tokens: int = setting(2, doc="tokens of the answer")
    top_logprobs: int = setting(5, doc="alternatives read for P(yes)")

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, least in (("max_tokens", 1), ("top_logprobs", 0)):
            if getattr(self, name) < least:
                raise ConfigError(f"judge: {name} must be >= {least}, got {getattr(self, name)}")

    def decoding(self, attempt: int) -> Decoding:
        """Greedy, the same on every ask."""
        logprobs = self.mode != "plain"
        return Decoding(
            max_tokens=self.max_tokens,
            top_logprobs=self.top_logprobs if logprobs else 0,
            token_logprobs=logprobs,
            choice=ANSWERS if self.constrained else (),
        )


def user_message(template: PromptTemplate, request: JudgeRequest, document: str) -> list[Message]:
    """The judge prompt for one request as a single user message."""
    content = template.render(document=document, question=request.question, answer=request.answer)
    return [{"role": "user", "content": content}]
