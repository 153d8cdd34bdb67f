"""The relevance judge on an OpenAI-compatible chat server (OpenAI, or vLLM's OpenAI server)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tipqa.errors import ConfigError
from tipqa.judges.base import JUDGE_SLOTS
from tipqa.judges.parsing import parse_relevance
from tipqa.llm.openai_client import ChatResult, Message, OpenAIServerSettings, Usage
from tipqa.llm.prompts import load_template
from tipqa.records import JudgeRequest, Judgment, Relevance
from tipqa.settings import setting
from tipqa.stats import StageStats

RAW_CHARS = 80


JudgeMode = Literal["logprobs", "choice", "plain"]


@dataclass(frozen=True)
class OpenAIJudgeSettings(OpenAIServerSettings):
    """[judge] of the OpenAI-compatible backend.

    `mode`: "logprobs" asks for the answer token's log-probabilities (P(yes) is recorded),
    "choice" also constrains decoding to yes/no (vLLM's `structured_outputs`), "plain" asks
    for neither (servers that support no logprobs); every mode parses the answer strictly.
    """

    model: str = "meta-llama/Llama-3.1-8B-Instruct"
    prompt: str = setting("judge-v1", doc="a shipped template or a file")
    mode: JudgeMode = setting("logprobs", doc="logprobs, choice (constrained yes/no) or plain")
    max_tokens: int = setting(2, doc="tokens of the answer")
    top_logprobs: int = setting(5, doc="alternatives read for P(yes)")
    parse_retries: int = setting(2, doc="re-asks of an answer other than yes or no")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.parse_retries < 0:
            raise ConfigError(f"openai judge: parse_retries must be >= 0, got {self.parse_retries}")
        if self.max_tokens < 1:
            raise ConfigError(f"openai judge: max_tokens must be >= 1, got {self.max_tokens}")

    def identity(self) -> dict[str, Any]:
        """The settings that decide the answers, with the prompt template's content hash."""
        return {**super().identity(), "prompt_sha256": load_template(self.prompt).sha256}


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
        logprobs = settings.mode != "plain"
        choice = settings.mode == "choice"
        self.params: dict[str, Any] = {"max_tokens": settings.max_tokens}
        if logprobs:
            self.params.update(logprobs=True, top_logprobs=settings.top_logprobs)
        if choice:
            self.params["extra_body"] = {"structured_outputs": {"choice": ["yes", "no"]}}
        self.cache_config = {
            "max_tokens": settings.max_tokens,
            "logprobs": logprobs,
            "choice": choice,
        }

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

    def judge_with_usage(self, requests: Sequence[JudgeRequest]) -> list[tuple[Judgment, Usage]]:
        """Judgments with the tokens each one cost (re-asks included)."""
        batch = [self.messages(request) for request in requests]
        results = self.client.complete_many(batch, desc="judge", **self.params)
        usage = [result.usage for result in results]
        labels = [parse_relevance(r.text) if r.ok else None for r in results]
        for _ in range(self.parse_retries):
            pending = [i for i, r in enumerate(results) if r.ok and labels[i] is None]
            if not pending:
                break
            self.stats.add("parse_retries", len(pending))
            again = self.client.complete_many(
                [batch[i] for i in pending], desc="judge (re-ask)", **self.params
            )
            for i, result in zip(pending, again, strict=True):
                results[i] = result
                usage[i] = usage[i] + result.usage
                labels[i] = parse_relevance(result.text) if result.ok else None
        judgments = [
            self._judgment(request, result, label)
            for request, result, label in zip(requests, results, labels, strict=True)
        ]
        return list(zip(judgments, usage, strict=True))

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
            self.stats.error("unparseable")
        else:
            p_yes = p_yes_from_logprobs(result.top_logprobs)
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
