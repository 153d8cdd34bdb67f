"""Questions from the original TriviaQA release JSON (`{"Data": [...]}`, one file per domain)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import orjson

from tipqa.core.errors import InputError
from tipqa.core.records import Question
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.paths import expand_paths
from tipqa.sources.questions.base import QuestionCollector, QuestionFilesSettings, make_question

FIELDS = ("QuestionId", "Question", "Answer.Value", "Answer.Aliases")


class TriviaQAJson:
    """The release's `qa/*.json` files: `Data[]` entries with Question, QuestionId and Answer.

    A QuestionId repeated inside one file is an InputError. The release lists a question once
    per domain (e.g. in both web-dev.json and wikipedia-dev.json): across files a repeat is
    merged into its first occurrence when question, answer and aliases agree, and is an
    InputError when they differ. `Question.source` is "{file name}:{index in Data}".
    """

    def __init__(self, paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> None:
        self.files: list[Path] = expand_paths(paths, accept=lambda p: p.suffix == ".json")
        self.stats = StepStats("questions")

    @classmethod
    def from_settings(cls, settings: QuestionFilesSettings) -> TriviaQAJson:
        """The source of a pool's `paths`."""
        return cls(list(settings.paths))

    def load(self, limit: int | None = None) -> list[Question]:
        """The questions of every file, in file order then Data order (the first `limit`: no
        further file is read)."""
        self.stats = StepStats("questions")
        collector = QuestionCollector(self.stats, duplicates="merge", limit=limit)
        for path in self.files:
            for question in self.read_file(path):
                collector.add(question, path=str(path))
                if collector.full:
                    return collector.questions()
        return collector.questions()

    def read_file(self, path: Path) -> list[Question]:
        """The questions of one release file; InputError on a repeated id inside it."""
        where = str(path)
        try:
            document = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc}", path=where) from exc
        if not isinstance(document, dict) or not isinstance(document.get("Data"), list):
            raise InputError("expected an object with a 'Data' list", path=where, field="Data")
        self.stats.add("files")
        collector = QuestionCollector(StepStats("file"), duplicates="error")
        for index, entry in enumerate(document["Data"]):
            place = f"Data[{index}]"
            if not isinstance(entry, dict):
                raise InputError(f"{place}: expected an object", path=where)
            answer = entry.get("Answer")
            if not isinstance(answer, dict):
                qid = entry.get("QuestionId")
                message = f"{place} (id {qid!r}): missing Answer (a test split has no answers)"
                raise InputError(message, path=where, field="Answer")
            question = make_question(
                qid=entry.get("QuestionId"),
                text=entry.get("Question"),
                answer=answer.get("Value"),
                alias_lists=[answer.get("Aliases"), answer.get("NormalizedAliases")],
                source=f"{path.name} {place}",
                path=where,
                line=None,
                place=place,
                fields=FIELDS,
            )
            collector.add(question, path=where)
        return collector.questions()
