"""Models under evaluation: the paper's answer prompt on an OpenAI-compatible server or vLLM.

Each backend's settings are the `[evaluate.<backend>]` config section; `Evaluate
--model-backend <backend>` picks one.
"""

from __future__ import annotations

from tipqa.evaluate.answerers.base import Answerer
from tipqa.registry import Registry

ANSWERERS: Registry[Answerer] = Registry("answerer")
ANSWERERS.add(
    "openai",
    "tipqa.evaluate.answerers.openai:OpenAIAnswerer",
    settings="tipqa.evaluate.answerers.openai:OpenAIAnswererSettings",
)
ANSWERERS.add(
    "vllm",
    "tipqa.evaluate.answerers.vllm:VLLMAnswerer",
    settings="tipqa.evaluate.answerers.vllm:VLLMAnswererSettings",
)
