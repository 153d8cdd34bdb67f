"""Questions from JSON-lines files: our own `Question` records, and llm-foundry's TriviaQA."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from tipqa.core.errors import InputError
from tipqa.core.records import Question
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.paths import expand_paths
from tipqa.sources.corpus.streams import SUFFIXES, is_supported
from tipqa.sources.questions.base import QuestionCollector, QuestionFilesSettings, make_question
from tipqa.sources.questions.quotes import unquote_csv
from tipqa.sources.questions.rows import DELIMITED, iter_rows

TIPQA_FIELDS = ("id", "text", "answer", "aliases")
FOUNDRY_FIELDS = ("context", "context", "answer", "aliases")
FOUNDRY_CONTEXT = re.compile(r"\A\s*Question:\s*(?P<question>.*?)\s*(?:\n\s*)?Answer:\s*\Z", re.S)

Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


class _JsonlQuestions:
    """Questions from JSON-lines files, one per line; a repeated id is an InputError."""

    def __init__(self, paths: Paths) -> None:
        self.files: list[Path] = expand_paths(paths, accept=is_supported)
        self.stats = StepStats("questions")

    @classmethod
    def from_settings(cls, settings: QuestionFilesSettings) -> Self:
        """The source of a pool's `paths`."""
        return cls(list(settings.paths))

    def load(self, limit: int | None = None) -> list[Question]:
        """The questions of every file, in file order then line order (the first `limit`)."""
        self.stats = StepStats("questions")
        collector = QuestionCollector(self.stats, duplicates="error", limit=limit)
        for path in self.files:
            self.stats.add("files")
            for number, row in iter_rows(path, stats=self.stats):
                question = self.row_question(row, path, number)
                collector.add(question, path=str(path), line=number)
                if collector.full:
                    return collector.questions()
        return collector.questions()

    def row_question(self, row: dict, path: Path, number: int) -> Question:
        """The question of one row (InputError naming file, line and field when it is bad)."""
        raise NotImplementedError


class TipqaJsonl(_JsonlQuestions):
    """`Question` records as JSONL (what the pipeline writes); a repeated id is an InputError.

    Aliases are rebuilt as everywhere (answer first, deduplicated by tokens); a record
    without `source` gets "{file name}:{line}".
    """

    def row_question(self, row: dict, path: Path, number: int) -> Question:
        """A `Question` record of one line."""
        source = row.get("source")
        if not isinstance(source, str) or not source:
            source = f"{path.name}:{number}"
        return make_question(
            qid=row.get("id"),
            text=row.get("text"),
            answer=row.get("answer"),
            alias_lists=[_require_list(row, "aliases", str(path), number)],
            source=source,
            path=str(path),
            line=number,
            place="record",
            fields=TIPQA_FIELDS,
        )


class LLMFoundryJsonl(_JsonlQuestions):
    """llm-foundry's TriviaQA JSONL: `{context: "Question: ...\\nAnswer:", answer, aliases}`.

    The rows carry no ids: a question's id is "{file stem}:{line}" (the stem without
    .jsonl/.gz/.zst, so compressing the file keeps the ids), stable as long as the file is
    not edited; `Question.source` is "{file name}:{line}". Some rows keep CSV quoting
    (`"Who painted ""Harbour at Dusk""?"`): question, answer and aliases are read as written
    (`tipqa.sources.questions.quotes`), counted as `csv_quoted_questions`, `csv_quoted_answers`
    (answers and aliases) and `quote_spaces_added`.
    """

    def row_question(self, row: dict, path: Path, number: int) -> Question:
        """The question of one llm-foundry row, its text taken out of the context prompt."""
        aliases = _require_list(row, "aliases", str(path), number)
        answer, *aliases = [self._as_written(v) for v in [row.get("answer"), *aliases]]
        return make_question(
            qid=f"{file_stem(path)}:{number}",
            text=self._unquoted_question(row, path, number),
            answer=answer,
            alias_lists=[aliases],
            source=f"{path.name}:{number}",
            path=str(path),
            line=number,
            place="record",
            fields=FOUNDRY_FIELDS,
        )

    def _as_written(self, value: object) -> object:
        """An answer or alias with CSV quoting undone (and counted); other values unchanged."""
        if not isinstance(value, str):
            return value
        unquoted = unquote_csv(value)
        if unquoted.changed:
            self.stats.add("csv_quoted_answers")
        return unquoted.text

    def _unquoted_question(self, row: dict, path: Path, number: int) -> str:
        """The question out of the context prompt, CSV quoting undone (and counted)."""
        context = row.get("context")
        match = FOUNDRY_CONTEXT.match(context) if isinstance(context, str) else None
        if match is None:
            raise InputError(
                'expected a context of the form "Question: ...\\nAnswer:"',
                path=str(path),
                line=number,
                field="context",
            )
        unquoted = unquote_csv(match.group("question"))
        if unquoted.changed:
            self.stats.add("csv_quoted_questions")
            self.stats.add("quote_spaces_added", unquoted.spaces_added)
        return unquoted.text


def file_stem(path: Path) -> str:
    """The file name without its data and compression suffixes."""
    name = path.name
    for _ in range(2):
        stem, dot, suffix = name.rpartition(".")
        if dot and stem and (f".{suffix.lower()}" in SUFFIXES or f".{suffix.lower()}" in DELIMITED):
            name = stem
    return name


def _require_list(row: dict, name: str, path: str, line: int) -> list:
    """The list in `row[name]`; InputError naming file, line and field otherwise."""
    value = row.get(name)
    if not isinstance(value, list):
        got = "nothing" if value is None else type(value).__name__
        raise InputError(f"expected a list of aliases, got {got}", path=path, line=line, field=name)
    return value
