"""The question-source seam: TriviaQA's published layouts and other QA datasets, as `Question`s.

Every source builds aliases the same way (`build_aliases`) and collects questions through
`QuestionCollector`, which decides what a repeated question id means:

* `"error"`: any repeat is an InputError (our own files; one TriviaQA release file).
* `"merge"`: a repeat with the same text, answer and aliases is merged into the first (the
  official release lists a question once per domain, web and wikipedia; the Hugging Face `rc`
  configurations hold both domains' rows); a repeat that differs is an InputError naming both.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Question
from tipqa.core.registry import Registry
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.core.text import tokenize

log = logging.getLogger(__name__)

Duplicates = Literal["error", "merge"]


class QuestionSource(Protocol):
    """Loads a list of questions, counting what it read in `stats`."""

    stats: StepStats

    def load(self, limit: int | None = None) -> list[Question]:
        """All questions of the source, in source order, ids unique; with `limit`, the first
        `limit` of them, reading no further."""
        ...


@dataclass(frozen=True)
class QuestionFilesSettings(Settings):
    """A pool's question files (`paths`: files, folders or globs), for the file sources."""

    paths: tuple[str, ...] = setting((), doc="question files, folders or globs")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.paths:
            raise ConfigError("a question source of files needs `paths` (files, folders or globs)")


FILES = "tipqa.sources.questions.base:QuestionFilesSettings"


@runtime_checkable
class FromFiles(Protocol):
    """A question source that reads local files (they identify its questions)."""

    files: list[Path]


QUESTION_SOURCES: Registry[QuestionSource] = Registry("question source")
QUESTION_SOURCES.add(
    "triviaqa-json", "tipqa.sources.questions.triviaqa:TriviaQAJson.from_settings", settings=FILES
)
QUESTION_SOURCES.add("hf-rows", "tipqa.sources.questions.hf:HFRows.from_settings", settings=FILES)
QUESTION_SOURCES.add(
    "hub",
    "tipqa.sources.questions.hf:HubQuestions",
    settings="tipqa.sources.questions.hf:HubQuestionSettings",
)
QUESTION_SOURCES.add(
    "tipqa-jsonl", "tipqa.sources.questions.jsonl:TipqaJsonl.from_settings", settings=FILES
)
QUESTION_SOURCES.add(
    "llm-foundry-jsonl",
    "tipqa.sources.questions.jsonl:LLMFoundryJsonl.from_settings",
    settings=FILES,
)
QUESTION_SOURCES.add(
    "fields",
    "tipqa.sources.questions.fields:FieldQuestions",
    settings="tipqa.sources.questions.fields:FieldQuestionsSettings",
)
QUESTION_SOURCES.add(
    "popqa",
    "tipqa.sources.questions.fields:PopQAQuestions",
    settings="tipqa.sources.questions.fields:PopQASettings",
)
QUESTION_SOURCES.add(
    "nq-open",
    "tipqa.sources.questions.fields:NQOpenQuestions",
    settings="tipqa.sources.questions.fields:NQOpenSettings",
)


def load_questions(source: str, **options: Any) -> list[Question]:
    """Questions of the source registered as `source`, its settings read from `options`."""
    settings = QUESTION_SOURCES.parse(source, "questions", options)
    return QUESTION_SOURCES.create(source, settings).load()


def build_aliases(candidates: Iterable[Any]) -> list[str]:
    """Aliases in order, stripped, deduplicated by token sequence (first spelling kept).

    Candidates that are not strings or that tokenize to nothing are dropped.
    """
    seen: set[tuple[str, ...]] = set()
    aliases: list[str] = []
    for candidate in candidates:
        if not isinstance(candidate, str):
            continue
        alias = " ".join(candidate.split())
        key = tuple(tokenize(alias))
        if key and key not in seen:
            seen.add(key)
            aliases.append(alias)
    return aliases


def make_question(
    *,
    qid: Any,
    text: Any,
    answer: Any,
    alias_lists: Iterable[Any],
    source: str,
    path: str,
    line: int | None,
    place: str,
    fields: tuple[str, str, str, str],
) -> Question:
    """A validated Question; InputError naming file, record and field when a part is bad.

    `fields` names the id, question, answer and aliases fields of the input layout, for
    messages; `place` names the record (e.g. "Data[3]").
    """
    id_field, text_field, answer_field, aliases_field = fields
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        raise InputError(
            f"{place}: missing or empty question id", path=path, line=line, field=id_field
        )
    where = f"{place} (id {qid!r})"
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            f"{where}: missing or empty question", path=path, line=line, field=text_field
        )
    if not isinstance(answer, str) or not answer.strip():
        raise InputError(
            f"{where}: missing or empty answer", path=path, line=line, field=answer_field
        )
    candidates: list[Any] = [answer]
    for value in alias_lists:
        if value is None:
            continue
        if not isinstance(value, list):
            message = f"{where}: aliases must be a list, got {type(value).__name__}"
            raise InputError(message, path=path, line=line, field=aliases_field)
        candidates.extend(value)
    aliases = build_aliases(candidates)
    if not aliases:
        raise InputError(
            f"{where}: no alias with a word in it (answer {answer!r})",
            path=path,
            line=line,
            field=aliases_field,
        )
    answer = " ".join(answer.split())
    return Question(id=qid, text=text.strip(), answer=answer, aliases=aliases, source=source)


LIKELY_SEPARATORS = ("<OR>", "|")
"""Strings that join aliases in some layouts (fmeval's `<OR>`) and no real TriviaQA answer
holds; `;` and ` / ` are left out: real answers have them ("Macbeth / The Scottish Play")."""


def likely_separator(question: Question) -> str | None:
    """The likely alias separator that the question's answer or an alias holds, if any."""
    for text in (question.answer, *question.aliases):
        for separator in LIKELY_SEPARATORS:
            if separator in text:
                return separator
    return None


class QuestionCollector:
    """Questions in first-seen order with one policy for repeated ids.

    An answer (or alias) holding a likely alias separator (`<OR>`, `|`) is counted
    (`answers_with_separator`) and warned about once, with the first place, when the
    questions are taken (`questions()`): read as one long alias, it matches no document.
    """

    def __init__(
        self, stats: StepStats, duplicates: Duplicates = "error", limit: int | None = None
    ) -> None:
        """`limit`: the number of questions after which the collector is `full` (a source
        stops reading there)."""
        if duplicates not in ("error", "merge"):
            raise ValueError(f"duplicates must be 'error' or 'merge', not {duplicates!r}")
        self.limit = limit
        self.stats = stats
        self.duplicates = duplicates
        self._questions: dict[str, Question] = {}
        self._joined: tuple[str, str] | None = None

    def add(
        self,
        question: Question,
        *,
        path: str,
        line: int | None = None,
        policy: Duplicates | None = None,
    ) -> None:
        """Add a question; a repeated id is merged or an InputError, as the policy says."""
        first = self._questions.get(question.id)
        if first is None:
            self._questions[question.id] = question
            self.stats.add("questions")
            separator = likely_separator(question)
            if separator is not None:
                self.stats.add("answers_with_separator")
                if self._joined is None:
                    place = (
                        f"{path}, line {line}" if line is not None else f"{path} {question.source}"
                    )
                    self._joined = (separator, f"{place}: {question.answer[:60]!r}")
            return
        if (policy or self.duplicates) == "error":
            raise InputError(
                f"duplicate question id {question.id!r} at {question.source} "
                f"(first at {first.source})",
                path=path,
                line=line,
            )
        same = (first.text, first.answer, set(first.aliases)) == (
            question.text,
            question.answer,
            set(question.aliases),
        )
        if not same:
            raise InputError(
                f"question id {question.id!r} appears at {first.source} and {question.source} "
                "with a different question, answer or aliases",
                path=path,
                line=line,
            )
        self.stats.add("merged_duplicates")

    @property
    def full(self) -> bool:
        """True once `limit` questions are collected: the source reads no further."""
        return self.limit is not None and len(self._questions) >= self.limit

    def questions(self) -> list[Question]:
        """The collected questions in first-seen order (warning of joined answers, once)."""
        if self._joined is not None:
            separator, example = self._joined
            count = int(self.stats.counts["answers_with_separator"])
            log.warning(
                "%d answers hold a likely alias separator %r (first: %s): each is read as one "
                "alias, which no document contains; if they join aliases, set alias_separator "
                "= %s in the pool's section (source = fields)",
                count,
                separator,
                example,
                separator,
            )
            self._joined = None
        return list(self._questions.values())
