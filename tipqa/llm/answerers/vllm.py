"""The model under evaluation on vLLM's offline engine: batched, greedy, with token logprobs.

The engine is the process's one engine (`tipqa.llm.vllm_engine.get_engine`), shared with a vLLM
judge of the same model and settings. With `chat` the prompt goes through the model's chat
template (an instruction-tuned model); without it the rendered prompt is the model's whole
input, as for the paper's Pythia base model. A prompt longer than the context leaves its
question unanswered with an error (a question has nothing to cut; that means a wrong
`max_model_len`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tipqa.core.settings import setting
from tipqa.llm.answerers.llm import AnswerTask, LLMAnswerer
from tipqa.llm.vllm_chat import VLLMChatModel, VLLMEngineSettings


@dataclass(frozen=True)
class VLLMAnswererSettings(VLLMEngineSettings, AnswerTask):
    """[evaluate.vllm]: the model under evaluation on vLLM's offline engine."""

    model: str = setting("EleutherAI/pythia-12b-deduped", doc="a Hub id or a local folder")
    chat: bool = setting(False, doc="through the model's chat template (false: a base model)")

    def uses_chat_template(self) -> bool:
        """`chat`: an instruction-tuned model's template, else the prompt alone."""
        return self.chat

    def described(self) -> dict[str, Any]:
        """Greedy decoding and the settings that shape the answer text and its logprobs."""
        return {
            **super().described(),
            "chat": self.chat,
            "max_model_len": self.max_model_len,
            "dtype": self.dtype,
        }


class VLLMAnswerer(LLMAnswerer):
    """The model under evaluation on vLLM's offline engine."""

    transport: VLLMChatModel

    @property
    def engine(self) -> Any:
        """The process's `vllm.LLM` engine for this model."""
        return self.transport.engine

    def prompts(self, questions: Sequence[str]) -> list[list[int]]:
        """Each question's prompt as token ids (chat template applied when `chat`)."""
        max_tokens = self.task.decoding().max_tokens
        encoded = self.transport.encode([self.prompt(q) for q in questions], max_tokens)
        return [prompt.token_ids for prompt in encoded]
