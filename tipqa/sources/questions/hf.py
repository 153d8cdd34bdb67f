"""Questions in the Hugging Face `trivia_qa` row layout: local files or the Hub dataset."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.records import Question
from tipqa.core.settings import Settings, knob, setting
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.base import MISSING, get_field
from tipqa.sources.corpus.paths import expand_paths
from tipqa.sources.corpus.streams import is_supported
from tipqa.sources.hf_datasets import load_split, local_files
from tipqa.sources.questions.base import QuestionCollector, QuestionFilesSettings, make_question
from tipqa.sources.questions.rows import iter_rows

FIELDS = ("question_id", "question", "answer.value", "answer.aliases")
COLUMNS = ["question_id", "question", "answer"]
HUB_NAME = "mandarjoshi/trivia_qa"
HUB_CONFIG = "rc.nocontext"


def _get(row: dict[str, Any], name: str) -> Any:
    """A (dotted) field of a row, None when absent."""
    value = get_field(row, name)
    return None if value is MISSING else value


def row_to_question(row: Any, *, source: str, path: str, line: int | None, place: str) -> Question:
    """The Question of one `trivia_qa` row (`question_id`, `question`, `answer` struct)."""
    if not isinstance(row, dict):
        raise InputError(f"{place}: expected an object", path=path, line=line)
    return make_question(
        qid=_get(row, "question_id"),
        text=_get(row, "question"),
        answer=_get(row, "answer.value"),
        alias_lists=[_get(row, "answer.aliases"), _get(row, "answer.normalized_aliases")],
        source=source,
        path=path,
        line=line,
        place=place,
        fields=FIELDS,
    )


def questions_from_rows(
    rows: Iterable[Any],
    *,
    origin: str,
    stats: StepStats | None = None,
    limit: int | None = None,
) -> list[Question]:
    """Questions of dataset rows (e.g. a `datasets.Dataset`), repeats merged when identical,
    the first `limit` of them (no further row is read).

    `Question.source` is "{origin}:{row index from 0}".
    """
    collector = QuestionCollector(stats or StepStats("questions"), duplicates="merge", limit=limit)
    for index, row in enumerate(rows):
        question = row_to_question(
            row, source=f"{origin}:{index}", path=origin, line=None, place=f"row {index}"
        )
        collector.add(question, path=origin)
        if collector.full:
            break
    return collector.questions()


class HFRows:
    """`trivia_qa` rows (e.g. `rc.nocontext`) saved as JSONL (.gz, .zst) or Parquet files.

    The `rc` configurations hold a question once per domain: identical repeats are merged,
    differing ones are an InputError. `Question.source` is "{file name}:{line or row from 1}".
    """

    def __init__(self, paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> None:
        self.files: list[Path] = expand_paths(paths, accept=is_supported)
        self.stats = StepStats("questions")

    @classmethod
    def from_settings(cls, settings: QuestionFilesSettings) -> HFRows:
        """The source of a pool's `paths`."""
        return cls(list(settings.paths))

    def load(self, limit: int | None = None) -> list[Question]:
        """The questions of every file, in file order then row order (the first `limit`)."""
        self.stats = StepStats("questions")
        collector = QuestionCollector(self.stats, duplicates="merge", limit=limit)
        for path in self.files:
            self.stats.add("files")
            where = str(path)
            for number, row in iter_rows(path, columns=COLUMNS, stats=self.stats):
                question = row_to_question(
                    row, source=f"{path.name}:{number}", path=where, line=number, place="row"
                )
                collector.add(question, path=where, line=number)
                if collector.full:
                    return collector.questions()
        return collector.questions()


@dataclass(frozen=True)
class HubQuestionSettings(Settings):
    """A pool read from the Hugging Face Hub (`source = hub`), or a local dataset folder."""

    name: str = setting(HUB_NAME, doc="a Hub dataset id or a local dataset folder")
    config: str | None = setting(HUB_CONFIG, doc="the dataset's configuration")
    split: str = setting("validation", doc="the split to read")
    revision: str | None = setting(None, doc="a branch, tag or commit of the dataset")
    streaming: bool = knob(False, doc="stream the rows instead of downloading the split")
    cache_dir: str | None = knob(None, doc="the datasets cache (empty: HF_DATASETS_CACHE)")

    def local_files(self) -> list[Path]:
        """The files of `name` when it is a local dataset folder."""
        return local_files(self.name)


class HubQuestions:
    """TriviaQA from the Hugging Face Hub (or a local dataset folder) via `datasets`.

    `limit` caps the rows read (before identical repeats are merged). `Question.source` is
    "{name}:{config}:{split}:{row index from 0}".
    """

    def __init__(self, settings: HubQuestionSettings, *, limit: int | None = None) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be positive, not {limit}")
        self.settings = settings
        self.limit = limit
        self.stats = StepStats("questions")

    @property
    def origin(self) -> str:
        """How this split is named in `Question.source` and in messages."""
        return f"{self.settings.name}:{self.settings.config}:{self.settings.split}"

    def load(self, limit: int | None = None) -> list[Question]:
        """The questions of the split (of its first `limit` rows when set at construction;
        the first `limit` questions when given here)."""
        dataset = load_split(self.settings)
        rows = dataset if self.limit is None else itertools.islice(dataset, self.limit)
        self.stats = StepStats("questions")
        return questions_from_rows(rows, origin=self.origin, stats=self.stats, limit=limit)
