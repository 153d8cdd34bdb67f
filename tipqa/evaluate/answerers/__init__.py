"""Models under evaluation: the paper's answer prompt on an OpenAI-compatible server or vLLM."""

from __future__ import annotations

from tipqa.evaluate.answerers.base import Answerer
from tipqa.evaluate.answerers.openai import OpenAIAnswererSettings
from tipqa.evaluate.answerers.vllm import VLLMAnswererSettings
from tipqa.registry import Registry
from tipqa.settings import Settings

ANSWERERS: Registry[Answerer] = Registry("answerer")
ANSWERERS.add("openai", "tipqa.evaluate.answerers.openai:OpenAIAnswerer")
ANSWERERS.add("vllm", "tipqa.evaluate.answerers.vllm:VLLMAnswerer")

ANSWERER_SETTINGS: dict[str, type[Settings]] = {
    "openai": OpenAIAnswererSettings,
    "vllm": VLLMAnswererSettings,
}


def make_answerer(backend: str, settings: Settings) -> Answerer:
    """The answerer of `backend`, built from its settings object."""
    cls = ANSWERERS.resolve(backend)
    expected = ANSWERER_SETTINGS[backend]
    if not isinstance(settings, expected):
        raise TypeError(f"answerer {backend!r} takes {expected.__name__}, not {type(settings)}")
    return cls(settings)  # type: ignore[call-arg]
