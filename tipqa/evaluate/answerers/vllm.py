"""The model under evaluation on vLLM's offline engine: batched, greedy, with token logprobs.

The engine is the process's one engine (`tipqa.llm.vllm_engine.get_engine`), shared with a vLLM
judge of the same model and settings. With `chat` the prompt goes through the model's chat
template (an instruction-tuned model); without it the rendered prompt is the model's whole
input, as for the paper's Pythia base model. A prompt longer than the context leaves its
question unanswered with an error (questions are short; that means a wrong `max_model_len`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from tipqa.errors import ConfigError
from tipqa.evaluate.answerers.base import DEFAULT_PROMPT, Answer, answer_template
from tipqa.extras import VLLM, Extra
from tipqa.llm.prompts import load_template
from tipqa.llm.usage import Usage
from tipqa.llm.vllm_engine import EngineConfig, get_engine
from tipqa.settings import Settings, knob, setting
from tipqa.stats import StageStats


@dataclass(frozen=True)
class VLLMAnswererSettings(Settings):
    """[evaluate.vllm]: the model under evaluation on vLLM's offline engine."""

    model: str = setting("EleutherAI/pythia-12b-deduped", doc="a Hub id or a local folder")
    prompt: str = setting(DEFAULT_PROMPT, doc="the answer prompt: a shipped template or a file")
    chat: bool = setting(False, doc="through the model's chat template (false: a base model)")
    max_tokens: int = setting(64, doc="tokens of an answer at most")
    stop: tuple[str, ...] = setting(("\n",), doc="stop strings (JSON list; empty: none)")
    logprobs: bool = setting(True, doc="read the chosen tokens' logprobs (the confidence)")
    max_model_len: int | None = setting(None, doc="context length (empty: the model's)")
    dtype: str = setting("auto", doc="weights' dtype (auto, bfloat16, float16, float32)")
    seed: int = setting(0, doc="the engine's seed")
    batch_size: int = knob(256, doc="prompts per engine call")
    tensor_parallel_size: int = knob(1)
    gpu_memory_utilization: float = knob(0.9)
    enforce_eager: bool = knob(False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_tokens < 1:
            raise ConfigError(f"answerer max_tokens must be >= 1, got {self.max_tokens}")
        if self.batch_size < 1:
            raise ConfigError(f"answerer batch_size must be >= 1, got {self.batch_size}")

    def extras(self) -> tuple[Extra, ...]:
        """The `vllm` package."""
        return (VLLM,)

    def identity(self) -> dict[str, Any]:
        """The settings that decide the answers, with the prompt template's content hash."""
        return {**super().identity(), "prompt_sha256": load_template(self.prompt).sha256}

    def engine_config(self) -> EngineConfig:
        """The engine these settings ask for (the same engine as a vLLM judge's of that model)."""
        names = [field.name for field in dataclasses.fields(EngineConfig)]
        return EngineConfig(**{name: getattr(self, name) for name in names})


class VLLMAnswerer:
    """Answers in batches of `batch_size` on the in-process engine (started on first use)."""

    backend = "vllm"

    def __init__(self, settings: VLLMAnswererSettings) -> None:
        self.settings = settings
        self.model = settings.model
        self.template = answer_template(settings.prompt)
        self.stats = StageStats("answers")

    def __repr__(self) -> str:
        return f"VLLMAnswerer(model={self.model!r}, chat={self.settings.chat})"

    @property
    def engine(self) -> Any:
        """The process's `vllm.LLM` engine for this model."""
        return get_engine(self.settings.engine_config())

    def close(self) -> None:
        """Nothing to let go of: the engine is the process's, shared (see `get_engine`)."""

    def decoding(self) -> dict[str, Any]:
        """Greedy decoding and the settings that shape the answer text and its logprobs."""
        s = self.settings
        return {
            "temperature": 0,
            "max_tokens": s.max_tokens,
            "stop": list(s.stop),
            "logprobs": s.logprobs,
            "chat": s.chat,
            "max_model_len": s.max_model_len,
            "dtype": s.dtype,
        }

    def prompts(self, questions: Sequence[str]) -> list[list[int]]:
        """Each question's prompt as token ids (chat template applied when `chat`)."""
        tokenizer = self.engine.get_tokenizer()
        texts = [self.template.render(question=question) for question in questions]
        if not self.settings.chat:
            return [list(ids) for ids in tokenizer(texts)["input_ids"]]
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(
                f"vllm answerer: model {self.model!r} has no chat template; set chat = false"
            )
        chats = [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
            )
            for text in texts
        ]
        return [list(ids) for ids in tokenizer(chats, add_special_tokens=False)["input_ids"]]

    def _sampling_params(self) -> Any:
        from vllm import SamplingParams

        return SamplingParams(
            temperature=0.0,
            max_tokens=self.settings.max_tokens,
            stop=list(self.settings.stop) or None,
            logprobs=1 if self.settings.logprobs else None,
        )

    def answer(self, questions: Sequence[str]) -> list[Answer]:
        """One answer per question, in order, generated in batches."""
        if not questions:
            return []
        engine = self.engine
        limit = int(engine.model_config.max_model_len) - self.settings.max_tokens
        prompts = self.prompts(questions)
        answers: list[Answer | None] = [None] * len(questions)
        fitting = []
        for i, ids in enumerate(prompts):
            if len(ids) > limit:
                self.stats.error("prompt_too_long")
                answers[i] = Answer(error=f"prompt too long: {len(ids)} tokens, {limit} fit")
            else:
                fitting.append(i)
        params = self._sampling_params()
        size = self.settings.batch_size
        starts = range(0, len(fitting), size)
        for start in tqdm(starts, desc="answers (vllm)", unit="batch", disable=len(starts) < 2):
            chosen = fitting[start : start + size]
            outputs = engine.generate(
                [{"prompt_token_ids": prompts[i]} for i in chosen], params, use_tqdm=False
            )
            self.stats.add("batches")
            for i, output in zip(chosen, outputs, strict=True):
                answers[i] = self._answer(output, len(prompts[i]))
        return [answer for answer in answers if answer is not None]

    def _answer(self, output: Any, prompt_tokens: int) -> Answer:
        """The text and chosen-token logprobs of one engine output."""
        completion = output.outputs[0]
        token_ids = list(completion.token_ids)
        logprobs = None
        if self.settings.logprobs and completion.logprobs is not None:
            logprobs = [
                float(position[token].logprob)
                for token, position in zip(token_ids, completion.logprobs, strict=False)
            ]
        usage = Usage(prompt_tokens, len(token_ids))
        self.stats.add("answered")
        self.stats.add("prompt_tokens", prompt_tokens)
        self.stats.add("completion_tokens", len(token_ids))
        return Answer(completion.text.strip(), logprobs, usage)
