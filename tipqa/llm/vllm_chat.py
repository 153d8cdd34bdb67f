"""The vLLM offline-engine transport: chat-format, tokenize, fit, batch and generate.

Prompts go through the model's chat template (or, with `chat` off, the user message is the
model's whole input, as for a base model), are tokenized here and follow the one length rule of
`tipqa.llm.chat`: a prompt that overflows the context is cut in its `cuttable` text (by tokens,
from the end) while the rest stays whole; what still does not fit fails with "prompt too long".
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from tqdm import tqdm

from tipqa.core.errors import ConfigError
from tipqa.core.extras import VLLM, Extra
from tipqa.core.settings import knob, setting
from tipqa.core.stats import StepStats
from tipqa.llm.chat import ChatModel, ChatPrompt, Completion, Decoding, Message, OnCompletion
from tipqa.llm.settings import LLMSettings
from tipqa.llm.usage import Usage
from tipqa.llm.vllm_engine import EngineConfig, get_engine, running

FIT_ATTEMPTS = 8
STRUCTURED_OUTPUTS = "structured_outputs"


@dataclass
class Prompt:
    """A request's token ids ready for the engine, or why it could not be built."""

    token_ids: list[int]
    error: str | None = None
    truncated: bool = False


@dataclass(frozen=True)
class VLLMEngineSettings(LLMSettings):
    """The engine knobs every LLM task on vLLM's offline engine shares."""

    provider: ClassVar[str] = "vllm"

    model: str = setting("meta-llama/Llama-3.1-8B-Instruct", doc="a Hub id or a local folder")
    max_model_len: int | None = setting(None, doc="context length (empty: the model's)")
    dtype: str = setting("auto", doc="weights' dtype (auto, bfloat16, float16, float32)")
    seed: int = setting(0, doc="the engine's seed")
    batch_size: int = knob(256, doc="prompts per engine call")
    tensor_parallel_size: int = knob(1, doc="GPUs the model is split over")
    gpu_memory_utilization: float = knob(0.9, doc="share of GPU memory the engine may take")
    enforce_eager: bool = knob(False, doc="no CUDA graphs (starts faster, runs slower)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_size < 1:
            raise ConfigError(f"vllm: batch_size must be >= 1, got {self.batch_size}")
        if self.max_model_len is not None and self.max_model_len < 2:
            raise ConfigError(f"vllm: max_model_len must be >= 2, got {self.max_model_len}")

    def extras(self) -> tuple[Extra, ...]:
        """The `vllm` package."""
        return (VLLM,)

    def engine_config(self) -> EngineConfig:
        """The arguments of the engine these settings ask for (one per process)."""
        names = [field.name for field in dataclasses.fields(EngineConfig)]
        return EngineConfig(**{name: getattr(self, name) for name in names})

    def uses_chat_template(self) -> bool:
        """Whether prompts go through the model's chat template."""
        return True

    def transport(self, stats: StepStats, *, progress: bool = True) -> ChatModel:
        """The process's engine for these settings, as a chat model counting into `stats`."""
        return VLLMChatModel(
            self.engine_config(),
            batch_size=self.batch_size,
            chat=self.uses_chat_template(),
            stats=stats,
        )


class VLLMChatModel:
    """Chat completions on the process's vLLM engine (started on first use), in batches."""

    provider = "vllm"

    def __init__(
        self, config: EngineConfig, *, batch_size: int, chat: bool, stats: StepStats
    ) -> None:
        self.config = config
        self.model = config.model
        self.batch_size = batch_size
        self.chat = chat
        self.stats = stats

    def __repr__(self) -> str:
        return f"VLLMChatModel(model={self.model!r}, chat={self.chat})"

    def identity(self) -> dict[str, Any]:
        """The model, its context length, dtype and seed, and whether prompts go through its
        chat template (not the knobs that only change how fast it runs)."""
        config = self.config
        return {
            "provider": self.provider,
            "model": config.model,
            "max_model_len": config.max_model_len,
            "dtype": config.dtype,
            "seed": config.seed,
            "chat": self.chat,
        }

    @property
    def engine(self) -> Any:
        """The process's `vllm.LLM` engine for this model (a start is counted: `engine_starts`,
        and its seconds, `engine_start_seconds`)."""
        if running(self.config):
            return get_engine(self.config)
        began = time.perf_counter()
        engine = get_engine(self.config)
        self.stats.add("engine_starts")
        self.stats.add("engine_start_seconds", round(time.perf_counter() - began, 3))
        return engine

    @property
    def context_length(self) -> int:
        """The engine's context length in tokens (the configured one, else the model's)."""
        if self.config.max_model_len is not None:
            return self.config.max_model_len
        return int(self.engine.model_config.max_model_len)

    def close(self) -> None:
        """Nothing to let go of: the engine is the process's, shared (see `get_engine`)."""

    def complete(
        self,
        prompts: Sequence[ChatPrompt],
        decoding: Decoding,
        *,
        desc: str = "chat",
        on_result: OnCompletion | None = None,
    ) -> list[Completion]:
        """One completion per prompt, in order; `on_result` hears each after its batch."""
        if not prompts:
            return []
        self.stats.add("requests", len(prompts))
        encoded = self.encode(prompts, decoding.max_tokens)
        out: list[Completion | None] = [None] * len(prompts)
        fitting = []
        for i, prompt in enumerate(encoded):
            if prompt.error is None:
                fitting.append(i)
            else:
                out[i] = failed = Completion(error=prompt.error)
                if on_result is not None:
                    on_result(i, failed)
        params = sampling_params(decoding)
        for batch in self._batches(fitting, desc):
            fresh = self._generate([encoded[i].token_ids for i in batch], params)
            for i, done in zip(batch, fresh, strict=True):
                done.truncated = encoded[i].truncated
                out[i] = done
                if on_result is not None:
                    on_result(i, done)
        return [completion for completion in out if completion is not None]

    def _batches(self, pending: list[int], desc: str) -> Iterable[list[int]]:
        """The pending prompts in engine batches of `batch_size`, with a progress bar."""
        starts = range(0, len(pending), self.batch_size)
        for start in tqdm(starts, desc=f"{desc} (vllm)", unit="batch", disable=len(starts) < 2):
            yield pending[start : start + self.batch_size]

    def encode(self, prompts: Sequence[ChatPrompt], max_tokens: int) -> list[Prompt]:
        """Format and tokenize every prompt; cut the cuttable text of those that overflow."""
        tokenizer = self.engine.get_tokenizer()
        limit = self.context_length - max_tokens
        texts = [self._text(tokenizer, prompt.messages) for prompt in prompts]
        ids = tokenizer(texts, add_special_tokens=not self.chat)["input_ids"]
        encoded = []
        for prompt, token_ids in zip(prompts, ids, strict=True):
            fitted = Prompt(list(token_ids))
            if len(token_ids) > limit:
                fitted = self._fit(tokenizer, prompt, len(token_ids), limit)
            encoded.append(fitted)
        return encoded

    def _text(self, tokenizer: Any, messages: list[Message]) -> str:
        """The model's input text: the chat template applied, or the user message alone."""
        if not self.chat:
            return "\n\n".join(message["content"] for message in messages)
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(f"vllm: model {self.model!r} has no chat template; set chat = false")
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _ids(self, tokenizer: Any, messages: list[Message]) -> list[int]:
        """The token ids of one prompt."""
        text = self._text(tokenizer, messages)
        return list(tokenizer(text, add_special_tokens=not self.chat)["input_ids"])

    def _fit(self, tokenizer: Any, prompt: ChatPrompt, length: int, limit: int) -> Prompt:
        """The prompt with its cuttable text cut to the longest token prefix that fits."""
        if prompt.cut is None or not prompt.cuttable:
            self.stats.error("prompt_too_long")
            return Prompt([], f"prompt too long: {length} tokens, {limit} fit")
        overhead = len(self._ids(tokenizer, prompt.cut("")))
        budget = limit - overhead
        cuttable_ids = tokenizer.encode(prompt.cuttable, add_special_tokens=False)
        for _ in range(FIT_ATTEMPTS):
            if budget <= 0:
                break
            ids = self._ids(tokenizer, prompt.cut(tokenizer.decode(cuttable_ids[:budget])))
            if len(ids) <= limit:
                self.stats.add("truncated")
                self.stats.add("truncated_document_tokens", len(cuttable_ids) - budget)
                return Prompt(ids, truncated=True)
            budget -= len(ids) - limit
        self.stats.error("prompt_too_long")
        return Prompt(
            [],
            f"prompt too long: instruction, question and answer take {overhead} tokens, "
            f"the context allows {limit}",
        )

    def _generate(self, batch: list[list[int]], params: Any) -> list[Completion]:
        """One engine batch: the completions of these prompts, in order."""
        engine = self.engine
        outputs = engine.generate(
            [{"prompt_token_ids": ids} for ids in batch], params, use_tqdm=False
        )
        self.stats.add("batches")
        self.stats.add("prompts", len(batch))
        self.stats.add("prompt_tokens", sum(len(ids) for ids in batch))
        tokenizer = engine.get_tokenizer()
        return [
            self._completion(tokenizer, output, len(ids))
            for output, ids in zip(outputs, batch, strict=True)
        ]

    def _completion(self, tokenizer: Any, output: Any, prompt_tokens: int) -> Completion:
        """The text, log-probabilities and tokens of one engine output."""
        generated = output.outputs[0]
        token_ids = list(generated.token_ids)
        self.stats.add("completion_tokens", len(token_ids))
        positions = generated.logprobs or []
        top = [
            [(_token_text(tokenizer, tid, lp), lp.logprob) for tid, lp in position.items()]
            for position in positions
        ]
        chosen = None
        if generated.logprobs is not None:
            chosen = [
                float(position[token].logprob)
                for token, position in zip(token_ids, positions, strict=False)
            ]
        usage = Usage(prompt_tokens, len(token_ids))
        return Completion(generated.text, top, chosen, usage)


def _token_text(tokenizer: Any, token_id: int, logprob: Any) -> str:
    """The text of one alternative token (decoded by the engine, else by the tokenizer)."""
    if logprob.decoded_token is not None:
        return str(logprob.decoded_token)
    return str(tokenizer.decode([token_id]))


def sampling_params(decoding: Decoding) -> Any:
    """vLLM's sampling parameters for `decoding` (imports vllm); `decoding.extra` may carry a
    `structured_outputs` constraint, as a server's request would."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    options: dict[str, Any] = {"temperature": decoding.temperature}
    if decoding.seed is not None:
        options["seed"] = decoding.seed
    constraint = decoding.extra.get(STRUCTURED_OUTPUTS)
    if decoding.choice:
        options["structured_outputs"] = StructuredOutputsParams(choice=list(decoding.choice))
    elif constraint:
        options["structured_outputs"] = StructuredOutputsParams(**constraint)
    logprobs = decoding.top_logprobs or (1 if decoding.token_logprobs else None)
    return SamplingParams(
        max_tokens=decoding.max_tokens,
        logprobs=logprobs,
        stop=list(decoding.stop) or None,
        **options,
    )
