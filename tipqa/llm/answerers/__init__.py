"""Models under evaluation: the paper's answer prompt on an OpenAI-compatible server or vLLM.

Each backend's settings are the `[evaluate.<backend>]` config section; `Evaluate
--model-backend <backend>` picks one.
"""

from __future__ import annotations

from tipqa.core.registry import Registry
from tipqa.llm.answerers.base import Answerer

ANSWERERS: Registry[Answerer] = Registry("answerer")
ANSWERERS.add(
    "openai",
    "tipqa.llm.answerers.openai:OpenAIAnswerer",
    settings="tipqa.llm.answerers.openai:OpenAIAnswererSettings",
)
ANSWERERS.add(
    "vllm",
    "tipqa.llm.answerers.vllm:VLLMAnswerer",
    settings="tipqa.llm.answerers.vllm:VLLMAnswererSettings",
)
