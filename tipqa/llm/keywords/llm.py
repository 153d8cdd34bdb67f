"""Keyword extraction by a few-shot chat model on any LLM provider (as in the paper).

The template is a JSON few-shot prompt (system message, example pairs, the user template); the
answer is read as comma-separated keywords, each kept once and only if the question has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from tipqa.core.errors import ConfigError
from tipqa.core.records import Keywords, Question
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.core.text import contains_phrase, tokenize
from tipqa.llm.cache import LLMCache
from tipqa.llm.cached_chat import transport_of
from tipqa.llm.chat import RAW_CHARS, ChatPrompt, Completion, Decoding, Message
from tipqa.llm.prompts import PromptTemplate, load_template
from tipqa.llm.settings import LLMTaskSettings

_SEPARATOR = re.compile(r"[,\n]")
_EDGE = " \t\"'“”‘’`.;:"


@dataclass
class ParsedKeywords:
    """Keywords read from a model's answer, and those dropped (with why)."""

    keywords: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)


def parse_keywords(raw: str, question: str) -> ParsedKeywords:
    """Split a comma-separated answer; keep each keyword once and only if the question has it."""
    question_tokens = tokenize(question)
    parsed = ParsedKeywords()
    seen: set[tuple[str, ...]] = set()
    for part in _SEPARATOR.split(raw):
        keyword = part.strip(_EDGE)
        tokens = tuple(tokenize(keyword))
        if not tokens:
            continue
        if tokens in seen:
            parsed.duplicates.append(keyword)
        elif not contains_phrase(question_tokens, tokens):
            parsed.absent.append(keyword)
        else:
            seen.add(tokens)
            parsed.keywords.append(keyword)
    return parsed


class KeywordSettings(LLMTaskSettings, Protocol):
    """What an LLM keyword extractor reads of its settings (an `LLMSettings` with these members)."""

    def decoding(self) -> Decoding:
        """The decoding of every request."""
        ...


@dataclass(frozen=True)
class KeywordTask(Settings):
    """[keywords] fields of a provider registered with `tipqa.llm.providers.register_provider`."""

    prompt: str = setting("keywords-v1", doc="a shipped few-shot template or a JSON file")
    max_tokens: int = setting(64, doc="tokens of the answer")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_tokens < 1:
            raise ConfigError(f"keywords: max_tokens must be >= 1, got {self.max_tokens}")

    def decoding(self) -> Decoding:
        """Greedy, `max_tokens`."""
        return Decoding(max_tokens=self.max_tokens)


class LLMKeywordExtractor:
    """Few-shot keyword extraction: system prompt, example pairs, then the question.

    With `cache` the chat model goes behind the LLM cache (`tipqa.llm.cached_chat`); an answer
    that gives no keyword of the question is not kept there, so that a rerun asks again.
    """

    stats: StepStats

    def __init__(
        self, settings: KeywordSettings, *, cache: LLMCache | None = None, progress: bool = True
    ) -> None:
        self.settings = settings
        self.template = load_template(settings.prompt)
        self.prefix, self.user = few_shot_messages(self.template)
        self.model = settings.model
        self.name = settings.tag(self.template)
        self.prompt_sha256 = self.template.sha256
        self.decoding = settings.decoding()
        self.stats = StepStats("keywords")
        self.chat = settings.chat_model(self.stats, cache=cache, progress=progress)
        self.transport = transport_of(self.chat)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, chat={self.chat!r})"

    def messages(self, question: Question) -> list[Message]:
        """The chat messages sent for one question."""
        return [*self.prefix, {"role": "user", "content": self.user.render(question=question.text)}]

    def close(self) -> None:
        """Let go of the transport's connections and the LLM cache's."""
        self.chat.close()

    def extract(self, questions: list[Question]) -> list[Keywords]:
        """Keywords for each question, in order; a failure is recorded in `Keywords.error`."""
        out: list[Keywords | None] = [None] * len(questions)

        def take(i: int, result: Completion) -> bool:
            out[i] = keywords = self._keywords(questions[i], result)
            return keywords.error is None

        prompts = [ChatPrompt(self.messages(question)) for question in questions]
        self.chat.complete(prompts, self.decoding, desc="keywords", on_result=take)
        return [keywords for keywords in out if keywords is not None]

    def _keywords(self, question: Question, result: Completion) -> Keywords:
        """The keywords of one answer, counted; a failure is recorded in `Keywords.error`."""
        self.stats.add("questions")
        if not result.ok:
            self.stats.add("failed")
            return Keywords(question.id, [], "", result.error)
        parsed = parse_keywords(result.text, question.text)
        self.stats.add("keywords_kept", len(parsed.keywords))
        self.stats.add("keywords_dropped_duplicate", len(parsed.duplicates))
        self.stats.add("keywords_dropped_not_in_question", len(parsed.absent))
        error = None
        if not parsed.keywords:
            error = f"no keywords of the question in the answer: {result.text[:RAW_CHARS]!r}"
            self.stats.error("no_keywords")
            self.stats.add("failed")
        return Keywords(question.id, parsed.keywords, result.text, error, cached=result.cached)


def few_shot_messages(template: PromptTemplate) -> tuple[list[Message], PromptTemplate]:
    """Read a few-shot JSON template: the fixed messages, and the user template for a question."""
    data = template.as_json()
    system, examples, user = data.get("system"), data.get("examples", []), data.get("user")
    where = f"keyword prompt {template.name!r}"
    if not isinstance(system, str) or not system.strip():
        raise ConfigError(f"{where}: 'system' must be a non-empty string")
    if not isinstance(user, str) or "{question}" not in user:
        raise ConfigError(f"{where}: 'user' must be a string with a {{question}} slot")
    if not isinstance(examples, list):
        raise ConfigError(f"{where}: 'examples' must be a list")
    messages: list[Message] = [{"role": "system", "content": system}]
    for number, example in enumerate(examples):
        if not (
            isinstance(example, dict)
            and isinstance(example.get("question"), str)
            and isinstance(example.get("keywords"), str)
        ):
            raise ConfigError(f"{where}: examples[{number}] needs string 'question' and 'keywords'")
        question = PromptTemplate("user", user).render(question=example["question"])
        messages.append({"role": "user", "content": question})
        messages.append({"role": "assistant", "content": example["keywords"]})
    return messages, PromptTemplate(f"{template.name}#user", user)
