"""Questions from any row layout, its fields named by settings; presets for PopQA and NQ open.

Rows come from files (JSON lines, Parquet, CSV, TSV) or a Hugging Face dataset. Each row's
question text, id, answer and aliases are read from configurable (dotted) fields:

* the answer field holds a string, or a list (its first item is the answer and all of them
  are aliases);
* the aliases field holds a list, or a JSON string of one (PopQA's `possible_answers`);
  left empty, the aliases are those of the answer field;
* a string value that starts with "[" is read as a JSON list (an error if it is not one);
* with `alias_separator` (fmeval's TriviaQA: `<OR>`), a string answer or alias is split on it:
  the first part is the answer, every part an alias;
* without an id field, a question's id is "{file stem}:{line}" ("{name}:{split}:{row}" for
  a Hub dataset), stable as long as the file is not edited.

A row that lacks a field, or has one of the wrong type, is an InputError naming the file,
line and field. Presets only change the defaults: `PopQASettings` (`question`,
`possible_answers` as a JSON list, `id`) and `NQOpenSettings` (`question`, the `answer`
list).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Question
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.base import MISSING, get_field
from tipqa.sources.corpus.paths import expand_paths
from tipqa.sources.hf_datasets import load_dataset, local_files
from tipqa.sources.questions.base import QuestionCollector, make_question
from tipqa.sources.questions.jsonl import FOUNDRY_CONTEXT, file_stem
from tipqa.sources.questions.rows import is_row_file, iter_rows

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FieldQuestionsSettings(Settings):
    """Where the rows are (files, or a Hub dataset) and which fields hold what."""

    paths: tuple[str, ...] = setting(
        (), doc="question files (JSONL, Parquet, CSV, TSV), folders or globs"
    )
    name: str = setting("", doc="a Hub dataset (or a local dataset folder), instead of `paths`")
    config: str | None = setting(None, doc="the Hub dataset's configuration")
    split: str = setting("test", doc="the Hub dataset's split")
    question_field: str = setting("question", doc="field of the question text (dotted: nested)")
    id_field: str = setting("", doc="field of the question id (empty: {file stem}:{line})")
    answer_field: str = setting(
        "answer", doc="field of the answer: a string, or a list (first item, all are aliases)"
    )
    aliases_field: str = setting(
        "", doc="field of the aliases: a list or a JSON string of one (empty: the answer's)"
    )
    alias_separator: str = setting(
        "", doc="split answers and aliases on it: fmeval's TriviaQA joins aliases with <OR>"
    )

    def local_files(self) -> list[Path]:
        """The files of `name` when it is a local dataset folder."""
        return local_files(self.name) if self.name else []


@dataclass(frozen=True)
class PopQASettings(FieldQuestionsSettings):
    """PopQA (`akariasai/PopQA`, or its `popQA.tsv`): `possible_answers` is a JSON list."""

    id_field: str = setting("id", doc="field of the question id")
    answer_field: str = setting(
        "possible_answers", doc="field of the answers (a JSON list: the first is the answer)"
    )
    aliases_field: str = setting("possible_answers", doc="field of the aliases")


@dataclass(frozen=True)
class NQOpenSettings(FieldQuestionsSettings):
    """Natural Questions open (`google-research-datasets/nq_open`): `answer` is a list."""

    split: str = setting("validation", doc="the Hub dataset's split")
    answer_field: str = setting("answer", doc="field of the answers (a list)")


def _value(row: dict[str, Any], name: str) -> Any:
    """A (dotted) field of a row, MISSING when absent; a "[..." string parsed as JSON."""
    value = get_field(row, name)
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a valid JSON list ({exc.msg})") from None
    return value


def _split(value: Any, separator: str) -> Any:
    """A string (or each string of a list) split on `separator` into a list of its parts."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(separator) if part.strip()]
    if isinstance(value, list):
        return [
            piece
            for item in value
            for piece in (_split(item, separator) if isinstance(item, str) else [item])
        ]
    return value


class FieldQuestions:
    """Questions from rows whose fields the settings name."""

    settings_class: ClassVar[type[FieldQuestionsSettings]] = FieldQuestionsSettings

    def __init__(self, settings: FieldQuestionsSettings | None = None) -> None:
        self.settings = settings if settings is not None else self.settings_class()
        if not self.settings.paths and not self.settings.name:
            raise ConfigError("question source: set `paths` (files) or `name` (a Hub dataset)")
        self.files: list[Path] = (
            expand_paths(list(self.settings.paths), accept=is_row_file)
            if self.settings.paths
            else []
        )
        self.stats = StepStats("questions")

    @property
    def fields(self) -> tuple[str, str, str, str]:
        """The id, question, answer and aliases fields (for messages)."""
        s = self.settings
        return (
            s.id_field or "(line)",
            s.question_field,
            s.answer_field,
            s.aliases_field or s.answer_field,
        )

    def load(self, limit: int | None = None) -> list[Question]:
        """Every row's question, in file then line order (the first `limit`, read no further).

        Questions written as llm-foundry's prompt (`Question: ...\nAnswer:`) are counted
        (`prompt_questions`) and warned about: `source = llm-foundry-jsonl` reads such rows.
        """
        self.stats = StepStats("questions")
        collector = QuestionCollector(self.stats, duplicates="error", limit=limit)
        for where, line, default_id, source, row in self._rows():
            question = self.row_question(row, where, line, default_id, source)
            collector.add(question, path=where, line=line)
            if FOUNDRY_CONTEXT.match(question.text):
                self.stats.add("prompt_questions")
            if collector.full:
                break
        prompts = int(self.stats.counts.get("prompt_questions", 0))
        if prompts:
            log.warning(
                "%d questions are written as a prompt ('Question: ...\\nAnswer:'), kept whole as "
                "the question text; for llm-foundry's rows use source = llm-foundry-jsonl",
                prompts,
            )
        return collector.questions()

    def _rows(self) -> Iterator[tuple[str, int | None, str, str, dict[str, Any]]]:
        """(path, line, id when none is given, source, row) of every row."""
        for path in self.files:
            self.stats.add("files")
            for line, row in iter_rows(path, stats=self.stats):
                yield str(path), line, f"{file_stem(path)}:{line}", f"{path.name}:{line}", row
        if self.settings.name:
            origin = f"{self.settings.name}:{self.settings.split}"
            for index, row in enumerate(self._hub_rows()):
                if not isinstance(row, dict):
                    raise InputError(f"row {index}: expected an object", path=origin)
                yield origin, None, f"{origin}:{index}", f"{origin}:{index}", row

    def _hub_rows(self) -> Iterable[Any]:
        s = self.settings
        try:
            return load_dataset(s.name, s.config, split=s.split)
        except Exception as exc:
            raise InputError(
                f"cannot load dataset: {type(exc).__name__}: {exc}", path=f"{s.name}:{s.split}"
            ) from exc

    def row_question(
        self, row: dict[str, Any], path: str, line: int | None, default_id: str, source: str
    ) -> Question:
        """The question of one row; InputError naming file, line and field when it is bad."""
        s = self.settings
        place = "record" if line is not None else source
        values: dict[str, Any] = {}
        for key, name in (
            ("id", s.id_field),
            ("text", s.question_field),
            ("answer", s.answer_field),
            ("aliases", s.aliases_field),
        ):
            if not name:
                continue
            try:
                values[key] = _value(row, name)
            except ValueError as exc:
                raise InputError(str(exc), path=path, line=line, field=name) from None
            if values[key] is MISSING:
                raise InputError(f"{place}: no field {name!r}", path=path, line=line, field=name)
        if s.alias_separator:
            for key in ("answer", "aliases"):
                if key in values:
                    values[key] = _split(values[key], s.alias_separator)
        answer = values["answer"]
        alias_lists: list[Any] = []
        if isinstance(answer, list):
            alias_lists.append(answer)
            answer = next((a for a in answer if isinstance(a, str) and a.strip()), None)
        if s.aliases_field and s.aliases_field != s.answer_field:
            aliases = values["aliases"]
            if not isinstance(aliases, list):
                got = type(aliases).__name__
                raise InputError(
                    f"expected a list of aliases (or a JSON string of one), got {got}",
                    path=path,
                    line=line,
                    field=s.aliases_field,
                )
            alias_lists.append(aliases)
        return make_question(
            qid=values.get("id", default_id),
            text=values["text"],
            answer=answer,
            alias_lists=alias_lists,
            source=source,
            path=path,
            line=line,
            place=place,
            fields=self.fields,
        )


class PopQAQuestions(FieldQuestions):
    """PopQA with its fields preset."""

    settings_class: ClassVar[type[FieldQuestionsSettings]] = PopQASettings


class NQOpenQuestions(FieldQuestions):
    """Natural Questions open with its fields preset."""

    settings_class: ClassVar[type[FieldQuestionsSettings]] = NQOpenSettings
