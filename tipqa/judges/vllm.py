"""The relevance judge on vLLM's offline engine: one engine per process, batched, strict answers.

Two modes. "logprobs" generates one token greedily and reads P(yes) / P(no) from the top
logprobs of that position ("yes", " yes", "Yes", ... all count). "choice" constrains decoding to
exactly "yes" or "no" (structured outputs); its probabilities are then renormalised over the
allowed tokens, so p_yes is P(yes | the answer is yes or no).

Prompts are the judge template rendered into the model's chat template and tokenized here, so a
document that would overflow the context is cut (by tokens, from the end) to fit, while the
instruction, question and answer stay whole. An answer that is not exactly yes/no is asked again
(only those requests) with seeded sampling, since a greedy re-ask would repeat itself; what stays
unparseable becomes a failed judgment, never a "no".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tqdm import tqdm

from tipqa.errors import ConfigError
from tipqa.extras import VLLM, Extra
from tipqa.judges.base import JUDGE_SLOTS, Judged
from tipqa.judges.parsing import parse_relevance
from tipqa.llm.prompts import load_template
from tipqa.llm.usage import Usage
from tipqa.llm.vllm_engine import EngineConfig, get_engine
from tipqa.records import JudgeRequest, Judgment, Relevance
from tipqa.settings import Settings, knob, setting
from tipqa.stats import StageStats

MODES = ("logprobs", "choice")
CHOICES = ("yes", "no")
TOP_LOGPROBS = 10
RETRY_TEMPERATURE = 1.0
RAW_CHARS = 80
WORDS_PER_TOKEN = 0.23
PROMPT_RESERVE_TOKENS = 512
FIT_ATTEMPTS = 8


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


def p_yes_from_candidates(
    candidates: Iterable[tuple[str, float]], *, prefixes: bool = False
) -> float | None:
    """P(yes) / (P(yes) + P(no)) from one position's (token text, logprob) alternatives.

    Token texts are compared lower-cased without surrounding spaces. With `prefixes` (constrained
    choice, where a first token such as "y" can only grow into "yes") a token counts for the
    answer it is a prefix of; otherwise it must be the whole word. None when neither appears.
    """
    mass = {"yes": 0.0, "no": 0.0}
    for text, logprob in candidates:
        token = text.strip().lower()
        if not token:
            continue
        for answer in CHOICES:
            if token == answer or (prefixes and answer.startswith(token)):
                mass[answer] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None


@dataclass
class Prompt:
    """A request's token ids ready for the engine, or why it could not be built."""

    token_ids: list[int]
    error: str | None = None
    truncated: bool = False


@dataclass
class _Answer:
    """What the engine generated for one prompt."""

    text: str
    p_yes: float | None
    completion_tokens: int

    @property
    def label(self) -> Relevance | None:
        """The strict reading of the text."""
        return parse_relevance(self.text)


@dataclass(frozen=True)
class VLLMJudgeSettings(Settings):
    """[judge] of the vLLM offline-engine backend."""

    model: str = "meta-llama/Llama-3.1-8B-Instruct"
    prompt: str = setting("judge-v1", doc="a shipped template or a file")
    mode: Literal["logprobs", "choice"] = setting("logprobs", doc="logprobs or choice")
    max_model_len: int | None = setting(None, doc="context length (empty: the model's)")
    dtype: str = setting("auto", doc="weights' dtype (auto, bfloat16, float16)")
    parse_retries: int = setting(1, doc="seeded re-asks of an answer other than yes or no")
    seed: int = setting(0, doc="seed of the re-asks and the engine")
    batch_size: int = knob(256, doc="prompts per engine call")
    tensor_parallel_size: int = knob(1)
    gpu_memory_utilization: float = knob(0.9)
    enforce_eager: bool = knob(False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_size < 1:
            raise ConfigError(f"vllm judge: batch_size must be >= 1, got {self.batch_size}")
        if self.parse_retries < 0:
            raise ConfigError(f"vllm judge: parse_retries must be >= 0, got {self.parse_retries}")
        if self.max_model_len is not None and self.max_model_len < 2:
            raise ConfigError(f"vllm judge: max_model_len must be >= 2, got {self.max_model_len}")

    def extras(self) -> tuple[Extra, ...]:
        """The `vllm` package."""
        return (VLLM,)

    def identity(self) -> dict[str, Any]:
        """The settings that decide the answers, with the prompt template's content hash."""
        return {**super().identity(), "prompt_sha256": load_template(self.prompt).sha256}

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

    def engine_config(self) -> EngineConfig:
        """The arguments of the engine these settings ask for."""
        names = [field.name for field in dataclasses.fields(EngineConfig)]
        return EngineConfig(**{name: getattr(self, name) for name in names})


class VLLMJudge:
    """Relevance judge running a chat model in-process on vLLM's offline engine."""

    def __init__(self, settings: VLLMJudgeSettings) -> None:
        self.settings = settings
        self.template = load_template(settings.prompt)
        self.template.require_slots(*JUDGE_SLOTS)
        self.model = settings.model
        self.mode = settings.mode
        self.batch_size = settings.batch_size
        self.parse_retries = settings.parse_retries
        self.seed = settings.seed
        self.engine_config = settings.engine_config()
        self.name = f"vllm:{self.model}:{self.mode}:{self.template.short_hash}"
        self.prompt_sha256 = self.template.sha256
        self.cache_config = {
            "mode": self.mode,
            "max_model_len": settings.max_model_len,
            "dtype": settings.dtype,
        }
        self.max_tokens = (
            1 if self.mode == "logprobs" else max(len(c.encode()) for c in CHOICES) + 1
        )
        self.stats = StageStats("judge")
        self.stats.info.update(
            model=self.model,
            mode=self.mode,
            prompt=self.template.name,
            prompt_sha256=self.template.sha256,
            p_yes=(
                "renormalised over the allowed answers yes/no (constrained choice)"
                if self.mode == "choice"
                else "P(yes)/(P(yes)+P(no)) over the top logprobs of the answer token"
            ),
        )

    @classmethod
    def of(cls, model: str, **settings: Any) -> VLLMJudge:
        """The judge of `model`, with `VLLMJudgeSettings(**settings)` (library use)."""
        return cls(VLLMJudgeSettings(model=model, **settings))

    def __repr__(self) -> str:
        return f"VLLMJudge(name={self.name!r})"

    @property
    def engine(self) -> Any:
        """The process's `vllm.LLM` engine for this judge's model (started on first use)."""
        return get_engine(self.engine_config)

    @property
    def context_length(self) -> int:
        """The engine's context length in tokens (the configured one, else the model's)."""
        if self.engine_config.max_model_len is not None:
            return self.engine_config.max_model_len
        return int(self.engine.model_config.max_model_len)

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

        `on_judged(index, judgment, usage)` is called for each judgment that is final, after
        each engine batch (`batch_size` prompts).
        """
        if not requests:
            return []
        self.stats.add("requests", len(requests))
        prompts = self.prompts(requests)
        usage = [Usage() for _ in requests]
        judgments: list[Judgment | None] = [None] * len(requests)
        pending = []
        for i, (request, prompt) in enumerate(zip(requests, prompts, strict=True)):
            if prompt.error is None:
                pending.append(i)
            else:
                judgments[i] = self._judgment(request, prompt, None)
        for attempt in range(self.parse_retries + 1):
            if not pending:
                break
            if attempt:
                self.stats.add("parse_retries", len(pending))
            last = attempt == self.parse_retries
            for batch in self._batches(pending):
                fresh = self._generate([prompts[i].token_ids for i in batch], attempt)
                for i, answer in zip(batch, fresh, strict=True):
                    usage[i] += Usage(len(prompts[i].token_ids), answer.completion_tokens)
                    if answer.label or last:
                        judgments[i] = judgment = self._judgment(requests[i], prompts[i], answer)
                        if on_judged is not None:
                            on_judged(i, judgment, usage[i])
            pending = [i for i in pending if judgments[i] is None]
        return [(j, u) for j, u in zip(judgments, usage, strict=True) if j is not None]

    def _batches(self, pending: list[int]) -> Iterable[list[int]]:
        """The pending requests in engine batches of `batch_size`, with a progress bar."""
        starts = range(0, len(pending), self.batch_size)
        for start in tqdm(starts, desc="judge (vllm)", unit="batch", disable=len(starts) < 2):
            yield pending[start : start + self.batch_size]

    def prompts(self, requests: Sequence[JudgeRequest]) -> list[Prompt]:
        """Render, chat-format and tokenize every request; cut documents that overflow."""
        tokenizer = self.engine.get_tokenizer()
        limit = self.context_length - self.max_tokens
        texts = [self._chat_text(tokenizer, r, r.text) for r in requests]
        encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
        prompts = []
        for request, ids in zip(requests, encoded, strict=True):
            prompt = Prompt(list(ids))
            if len(ids) > limit:
                prompt = self._truncated(tokenizer, request, limit)
            prompts.append(prompt)
        return prompts

    def _chat_text(self, tokenizer: Any, request: JudgeRequest, document: str) -> str:
        """The prompt text in the model's chat template."""
        content = self.template.render(
            document=document, question=request.question, answer=request.answer
        )
        messages = [{"role": "user", "content": content}]
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _truncated(self, tokenizer: Any, request: JudgeRequest, limit: int) -> Prompt:
        """The prompt with the document cut to the longest token prefix that fits `limit`."""
        overhead = len(
            tokenizer.encode(self._chat_text(tokenizer, request, ""), add_special_tokens=False)
        )
        budget = limit - overhead
        document_ids = tokenizer.encode(request.text, add_special_tokens=False)
        for _ in range(FIT_ATTEMPTS):
            if budget <= 0:
                break
            document = tokenizer.decode(document_ids[:budget])
            ids = tokenizer.encode(
                self._chat_text(tokenizer, request, document), add_special_tokens=False
            )
            if len(ids) <= limit:
                self.stats.add("truncated")
                self.stats.add("truncated_document_tokens", len(document_ids) - budget)
                return Prompt(ids, truncated=True)
            budget -= len(ids) - limit
        self.stats.error("prompt_too_long")
        return Prompt(
            [],
            f"prompt too long: instruction, question and answer take {overhead} tokens, "
            f"the context allows {limit}",
        )

    def _sampling_params(self, attempt: int) -> Any:
        """Greedy on the first ask, seeded sampling on re-asks; constrained in choice mode."""
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        options: dict[str, Any] = {"temperature": 0.0}
        if attempt:
            options = {"temperature": RETRY_TEMPERATURE, "seed": self.seed + attempt}
        if self.mode == "choice":
            options["structured_outputs"] = StructuredOutputsParams(choice=list(CHOICES))
        return SamplingParams(max_tokens=self.max_tokens, logprobs=TOP_LOGPROBS, **options)

    def _generate(self, batch: list[list[int]], attempt: int) -> list[_Answer]:
        """One engine batch: the answers to these prompts, in order."""
        engine = self.engine
        outputs = engine.generate(
            [{"prompt_token_ids": ids} for ids in batch],
            self._sampling_params(attempt),
            use_tqdm=False,
        )
        self.stats.add("batches")
        self.stats.add("prompts", len(batch))
        self.stats.add("prompt_tokens", sum(len(ids) for ids in batch))
        tokenizer = engine.get_tokenizer()
        return [self._answer(tokenizer, output) for output in outputs]

    def _answer(self, tokenizer: Any, output: Any) -> _Answer:
        """Read the generated text and p_yes of one engine output."""
        completion = output.outputs[0]
        self.stats.add("completion_tokens", len(completion.token_ids))
        first = completion.logprobs[0] if completion.logprobs else {}
        candidates = [
            (
                lp.decoded_token if lp.decoded_token is not None else tokenizer.decode([tid]),
                lp.logprob,
            )
            for tid, lp in first.items()
        ]
        p_yes = p_yes_from_candidates(candidates, prefixes=self.mode == "choice")
        return _Answer(completion.text, p_yes, len(completion.token_ids))

    def _judgment(self, request: JudgeRequest, prompt: Prompt, answer: _Answer | None) -> Judgment:
        """Build the record and count the outcome."""
        label: Relevance | None = None
        error = prompt.error
        p_yes = None
        if answer is not None:
            label = answer.label
            if label is None:
                error = f"unparseable: {answer.text[:RAW_CHARS]!r}"
                self.stats.error("unparseable")
            else:
                p_yes = answer.p_yes
        self.stats.add("judged")
        self.stats.add(f"label_{label}" if label else "failed")
        return Judgment(
            question_id=request.question_id,
            stage=request.stage,
            doc_id=request.doc_id,
            unit_id=request.unit_id,
            label=label,
            raw=answer.text if answer is not None else "",
            judge=self.name,
            error=error,
            p_yes=p_yes,
        )
