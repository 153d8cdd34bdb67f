"""One registration makes an LLM provider the judge, the keyword extractor and the answerer.

A provider is its settings class: an `LLMSettings` dataclass naming the provider and building
its transport (`transport`, a `tipqa.llm.chat.ChatModel`). `register_provider` combines it
with each task's own fields (`JudgeTask`, `KeywordTask`, `AnswerTask`) and registers the LLM
tasks under the provider's name in [judge], [keywords] and [evaluate] (`backend = NAME`).

A provider whose tasks need settings of their own (the built-in ones: the OpenAI judge's
`choice_via`, the vLLM judge's one-token answer) gives them per task (`ProviderTask`), as lazy
"module:Attribute" paths, so that registering the built-ins imports neither openai nor vllm.
The registries import this module on their first lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tipqa.core.errors import ConfigError
from tipqa.core.registry import Registry
from tipqa.core.settings import Settings
from tipqa.llm.answerers.base import ANSWERERS
from tipqa.llm.answerers.llm import AnswerTask, LLMAnswerer
from tipqa.llm.judges.base import JUDGES, LLM_JUDGE
from tipqa.llm.judges.llm import JudgeTask, LLMJudge
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS, LLM_EXTRACTOR
from tipqa.llm.keywords.llm import KeywordTask, LLMKeywordExtractor
from tipqa.llm.settings import LLMSettings


@dataclass(frozen=True)
class ProviderTask:
    """One task of a provider: its implementation and settings class (each a class or a lazy
    "module:Attribute"), and the optional capabilities it has beyond the task's own."""

    implementation: str | type
    settings: str | type[Settings]
    capabilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Task:
    """A task every provider has: its registry, fields, generic implementation, capabilities."""

    registry: Registry[Any]
    fields: type[Settings]
    implementation: type
    capabilities: tuple[str, ...]


_TASKS = {
    "judge": _Task(JUDGES, JudgeTask, LLMJudge, LLM_JUDGE),
    "keywords": _Task(KEYWORD_EXTRACTORS, KeywordTask, LLMKeywordExtractor, LLM_EXTRACTOR),
    "answerer": _Task(ANSWERERS, AnswerTask, LLMAnswerer, ()),
}


def task_settings(provider: type[LLMSettings], task: type[Settings]) -> type[LLMSettings]:
    """The settings class of one task on `provider`: the provider's fields and the task's."""
    name = f"{provider.__name__}{task.__name__}"
    combined = type(name, (provider, task), {"__module__": provider.__module__})
    result: type[LLMSettings] = dataclass(frozen=True)(combined)
    return result


def _derived(provider: type[LLMSettings], task: _Task) -> ProviderTask:
    """The task on `provider`: the task's fields and generic implementation, with every
    capability the two classes have (say, a judge whose settings know its context)."""
    settings = task_settings(provider, task.fields)
    return ProviderTask(
        task.implementation, settings, task.registry.capabilities_of(task.implementation, settings)
    )


def register_provider(
    name: str,
    settings: type[LLMSettings] | None = None,
    *,
    judge: ProviderTask | None = None,
    keywords: ProviderTask | None = None,
    answerer: ProviderTask | None = None,
) -> None:
    """Register the judge, keyword extractor and answerer of a provider under `name`.

    Each task is the one given for it, else the provider's `settings` combined with the task's
    fields, run by the task's generic implementation.
    """
    given = {"judge": judge, "keywords": keywords, "answerer": answerer}
    chosen: dict[str, ProviderTask] = {}
    for task_name, task in _TASKS.items():
        provider_task = given[task_name]
        if provider_task is None and settings is not None:
            provider_task = _derived(settings, task)
        if provider_task is not None:
            chosen[task_name] = provider_task
    missing = [task_name for task_name in _TASKS if task_name not in chosen]
    if missing:
        raise ConfigError(f"provider {name!r}: no settings class for its {', '.join(missing)}")
    for task_name, provider_task in chosen.items():
        task = _TASKS[task_name]
        task.registry.add(
            name,
            provider_task.implementation,
            provider_task.settings,
            capabilities=(*task.capabilities, *provider_task.capabilities),
        )


register_provider(
    "openai",
    judge=ProviderTask(
        "tipqa.llm.judges.openai:OpenAIJudge", "tipqa.llm.judges.openai:OpenAIJudgeSettings"
    ),
    keywords=ProviderTask(
        "tipqa.llm.keywords.openai:OpenAIKeywordExtractor",
        "tipqa.llm.keywords.openai:OpenAIKeywordSettings",
    ),
    answerer=ProviderTask(
        "tipqa.llm.answerers.openai:OpenAIAnswerer",
        "tipqa.llm.answerers.openai:OpenAIAnswererSettings",
    ),
)
register_provider(
    "vllm",
    judge=ProviderTask(
        "tipqa.llm.judges.vllm:VLLMJudge",
        "tipqa.llm.judges.vllm:VLLMJudgeSettings",
        capabilities=("knows_context",),
    ),
    keywords=ProviderTask(
        "tipqa.llm.keywords.vllm:VLLMKeywordExtractor",
        "tipqa.llm.keywords.vllm:VLLMKeywordSettings",
    ),
    answerer=ProviderTask(
        "tipqa.llm.answerers.vllm:VLLMAnswerer",
        "tipqa.llm.answerers.vllm:VLLMAnswererSettings",
    ),
)
