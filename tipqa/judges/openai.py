"""The relevance judge on an OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp, Ollama).

Three modes. "logprobs" asks for the answer's top log-probabilities too and records P(yes)
when the server returns them (a server that ignores the request still gets its answer read;
the judgments then have no p_yes, counted as `logprobs_missing`). "plain" asks for the answer
only, which every server supports. "choice" adds constrained decoding to exactly yes or no, in
the request field the server reads (`choice_via`): vLLM's `structured_outputs` (vLLM 0.12 and
later), its older `guided_choice`, or a GBNF `grammar` (llama.cpp's `llama-server`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tipqa.errors import ConfigError
from tipqa.judges.base import JUDGE_SLOTS, Judged
from tipqa.judges.parsing import parse_relevance
from tipqa.llm.openai_client import ChatResult, Message, OpenAIServerSettings, Usage
from tipqa.llm.prompts import load_template
from tipqa.records import JudgeRequest, Judgment, Relevance
from tipqa.settings import setting
from tipqa.stats import StageStats

RAW_CHARS = 80
ANSWERS = ["yes", "no"]
MAX_TOP_LOGPROBS = 20
DEFAULT_TOP_LOGPROBS = 5
JudgeMode = Literal["logprobs", "choice", "plain"]
ChoiceVia = Literal["structured_outputs", "guided_choice", "grammar"]
CHOICE_FIELDS: dict[str, dict[str, Any]] = {
    "structured_outputs": {"structured_outputs": {"choice": ANSWERS}},
    "guided_choice": {"guided_choice": ANSWERS},
    "grammar": {"grammar": 'root ::= "yes" | "no"'},
}
REASONING_HINT = (
    "the model wrote reasoning but no answer: raise max_tokens or turn its thinking off"
)


@dataclass(frozen=True)
class OpenAIJudgeSettings(OpenAIServerSettings):
    """[judge] of the OpenAI-compatible backend.

    `mode`: "logprobs" asks for the answer token's log-probabilities (P(yes) is recorded),
    "choice" also constrains decoding to yes/no (in the request field `choice_via` names),
    "plain" asks for neither (servers that support no logprobs); every mode parses the answer
    strictly. `extra_body`: more request fields for the server (say, thinking off).
    """

    model: str = "meta-llama/Llama-3.1-8B-Instruct"
    prompt: str = setting("judge-v1", doc="a shipped template or a file")
    mode: JudgeMode = setting("logprobs", doc="logprobs, choice (constrained yes/no) or plain")
    max_tokens: int = setting(2, doc="tokens of the answer")
    top_logprobs: int = setting(DEFAULT_TOP_LOGPROBS, doc="alternatives read for P(yes)")
    parse_retries: int = setting(2, doc="re-asks of an answer other than yes or no")
    choice_via: ChoiceVia = setting("structured_outputs", doc="the request field of choice")
    extra_body: dict[str, Any] = field(
        default_factory=dict, metadata={"doc": "more request fields (a JSON object)"}
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.parse_retries < 0:
            raise ConfigError(f"openai judge: parse_retries must be >= 0, got {self.parse_retries}")
        if self.max_tokens < 1:
            raise ConfigError(f"openai judge: max_tokens must be >= 1, got {self.max_tokens}")
        if not 0 <= self.top_logprobs <= MAX_TOP_LOGPROBS:
            raise ConfigError(
                f"openai judge: top_logprobs must be 0..{MAX_TOP_LOGPROBS}, got {self.top_logprobs}"
            )

    def identity(self) -> dict[str, Any]:
        """The settings that decide the answers, with the prompt template's content hash."""
        return {**super().identity(), "prompt_sha256": load_template(self.prompt).sha256}

    @property
    def asks_logprobs(self) -> bool:
        """Whether requests ask for log-probabilities."""
        return self.mode != "plain"

    def request_params(self) -> dict[str, Any]:
        """The request's parameters besides model, messages and temperature."""
        params: dict[str, Any] = {"max_tokens": self.max_tokens}
        if self.asks_logprobs:
            params.update(logprobs=True, top_logprobs=self.top_logprobs)
        extra = dict(CHOICE_FIELDS[self.choice_via]) if self.mode == "choice" else {}
        extra.update(self.extra_body)
        if extra:
            params["extra_body"] = extra
        return params

    def cache_config(self) -> dict[str, Any]:
        """What besides model, prompt and inputs decides an answer (part of its cache key).

        Settings at their former fixed values are left out, so that earlier caches stay valid.
        """
        config: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "logprobs": self.asks_logprobs,
            "choice": self.mode == "choice",
        }
        if self.mode == "choice" and self.choice_via != "structured_outputs":
            config["choice_via"] = self.choice_via
        if self.asks_logprobs and self.top_logprobs != DEFAULT_TOP_LOGPROBS:
            config["top_logprobs"] = self.top_logprobs
        if self.extra_body:
            config["extra_body"] = self.extra_body
        return config


class OpenAIJudge:
    """Asks a chat model whether a text suffices to answer a question; strict yes/no parsing."""

    def __init__(self, settings: OpenAIJudgeSettings, *, progress: bool = True) -> None:
        self.settings = settings
        self.template = load_template(settings.prompt)
        self.template.require_slots(*JUDGE_SLOTS)
        self.model = settings.model
        self.name = f"openai:{settings.model}:{self.template.short_hash}"
        self.prompt_sha256 = self.template.sha256
        self.parse_retries = settings.parse_retries
        self.stats = StageStats("judge")
        self.client = settings.client(self.stats, progress=progress)
        self.params = settings.request_params()
        self.cache_config = settings.cache_config()

    def __repr__(self) -> str:
        return f"OpenAIJudge(name={self.name!r}, base_url={self.client.base_url!r})"

    def messages(self, request: JudgeRequest) -> list[Message]:
        """The chat messages sent for one request."""
        content = self.template.render(
            document=request.text, question=request.question, answer=request.answer
        )
        return [{"role": "user", "content": content}]

    def cache_inputs(self, request: JudgeRequest) -> dict[str, str]:
        """The parts of a request that the prompt uses (the cache key's inputs)."""
        return {"document": request.text, "question": request.question, "answer": request.answer}

    def judge(self, requests: list[JudgeRequest]) -> list[Judgment]:
        """One judgment per request, in order; failures have `label=None` and an error."""
        return [judgment for judgment, _ in self.judge_with_usage(requests)]

    def judge_with_usage(
        self, requests: Sequence[JudgeRequest], on_judged: Judged | None = None
    ) -> list[tuple[Judgment, Usage]]:
        """Judgments with the tokens each one cost (re-asks included).

        `on_judged(index, judgment, usage)` is called as soon as a judgment is final: parsed,
        failed, or unparseable after the last re-ask.
        """
        batch = [self.messages(request) for request in requests]
        usage = [Usage() for _ in requests]
        judgments: list[Judgment | None] = [None] * len(requests)
        pending = list(range(len(requests)))
        for attempt in range(self.parse_retries + 1):
            if attempt:
                self.stats.add("parse_retries", len(pending))
            asked, last = pending, attempt == self.parse_retries

            def take(
                position: int, result: ChatResult, asked: list[int] = asked, last: bool = last
            ) -> None:
                i = asked[position]
                usage[i] += result.usage
                label = parse_relevance(result.text) if result.ok else None
                if result.ok and label is None and not last:
                    return
                judgments[i] = judgment = self._judgment(requests[i], result, label)
                if on_judged is not None:
                    on_judged(i, judgment, usage[i])

            desc = "judge (re-ask)" if attempt else "judge"
            self.client.complete_many(
                [batch[i] for i in asked], desc=desc, on_result=take, **self.params
            )
            pending = [i for i in asked if judgments[i] is None]
            if not pending:
                break
        return [(j, u) for j, u in zip(judgments, usage, strict=True) if j is not None]

    def _judgment(
        self, request: JudgeRequest, result: ChatResult, label: Relevance | None
    ) -> Judgment:
        """Build the record and count the outcome."""
        error = None
        p_yes = None
        if not result.ok:
            error = result.describe_error()
        elif label is None:
            error = f"unparseable: {result.text[:RAW_CHARS]!r}"
            if result.reasoned_only:
                error = f"{error} ({REASONING_HINT})"
            self.stats.error("unparseable")
        else:
            p_yes = p_yes_from_logprobs(result.top_logprobs)
            if self.settings.asks_logprobs and not result.top_logprobs:
                self.stats.add("logprobs_missing")
        self.stats.add("judged")
        self.stats.add(f"label_{label}" if label else "failed")
        return Judgment(
            question_id=request.question_id,
            stage=request.stage,
            doc_id=request.doc_id,
            unit_id=request.unit_id,
            label=label,
            raw=result.text,
            judge=self.name,
            error=error,
            p_yes=p_yes,
        )


def p_yes_from_logprobs(top_logprobs: list[list[tuple[str, float]]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) at the first answer position where either is among the top."""
    for alternatives in top_logprobs:
        yes = sum(math.exp(lp) for token, lp in alternatives if token.strip().lower() == "yes")
        no = sum(math.exp(lp) for token, lp in alternatives if token.strip().lower() == "no")
        if yes + no > 0:
            return yes / (yes + no)
    return None
