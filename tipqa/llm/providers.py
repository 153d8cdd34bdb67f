"""One registration makes an LLM provider the judge, the keyword extractor and the answerer.

A provider is its settings class: an `LLMSettings` dataclass naming the provider and building
its transport (`transport`, a `tipqa.llm.chat.ChatModel`). `register_provider` combines it
with each task's own fields (`JudgeTask`, `KeywordTask`, `AnswerTask`) and registers the LLM
tasks under the provider's name in [judge], [keywords] and [evaluate] (`backend = NAME`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.core.settings import Settings
from tipqa.llm.answerers.base import ANSWERERS
from tipqa.llm.answerers.llm import AnswerTask, LLMAnswerer
from tipqa.llm.judges.base import JUDGES, LLM_JUDGE
from tipqa.llm.judges.llm import JudgeTask, LLMJudge
from tipqa.llm.keywords.base import KEYWORD_EXTRACTORS, LLM_EXTRACTOR
from tipqa.llm.keywords.llm import KeywordTask, LLMKeywordExtractor
from tipqa.llm.settings import LLMSettings


def task_settings(provider: type[LLMSettings], task: type[Settings]) -> type[LLMSettings]:
    """The settings class of one task on `provider`: the provider's fields and the task's."""
    name = f"{provider.__name__}{task.__name__}"
    combined = type(name, (provider, task), {"__module__": provider.__module__})
    result: type[LLMSettings] = dataclass(frozen=True)(combined)
    return result


def register_provider(name: str, settings: type[LLMSettings]) -> None:
    """Register the judge, keyword extractor and answerer of the provider `settings` build."""
    judge = task_settings(settings, JudgeTask)
    knows_context = ("knows_context",) if callable(getattr(judge, "window_words", None)) else ()
    JUDGES.add(name, LLMJudge, judge, capabilities=(*LLM_JUDGE, *knows_context))
    KEYWORD_EXTRACTORS.add(
        name,
        LLMKeywordExtractor,
        task_settings(settings, KeywordTask),
        capabilities=LLM_EXTRACTOR,
    )
    ANSWERERS.add(name, LLMAnswerer, task_settings(settings, AnswerTask))
