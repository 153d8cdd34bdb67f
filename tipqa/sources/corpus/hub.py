"""Corpus reader for a Hugging Face dataset, streamed through `datasets.load_dataset`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Document
from tipqa.core.settings import Settings, knob, setting
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.base import DocumentParser, DuplicateIds, check_duplicate_policy
from tipqa.sources.hf_datasets import load_split, local_files


@dataclass(frozen=True)
class HubCorpusSettings(Settings):
    """[corpus] of a Hugging Face dataset (`source = hub`), streamed; see `HubCorpus`."""

    name: str = setting("", doc="a Hub dataset id, a local dataset folder, or a builder (json)")
    config: str | None = setting(None, doc="the dataset's configuration")
    split: str = setting("train", doc="the split to read")
    revision: str | None = setting(None, doc="a branch, tag or commit of the dataset")
    data_files: tuple[str, ...] | None = setting(None, doc="files for a builder such as json")
    text_field: str = setting("text", doc="field of the text (dotted names work)")
    id_field: str | None = setting(None, doc="field of the id (empty: name:split:row)")
    meta_fields: tuple[str, ...] | None = setting(None, doc="fields kept as meta (empty: all)")
    strict: bool = setting(False, doc="a bad record is an error, not a counted skip")
    max_chars: int | None = setting(None, doc="skip longer documents (counted)")
    streaming: bool = knob(True, doc="stream the rows (memory does not grow with the corpus)")
    cache_dir: str | None = knob(None, doc="the datasets cache (empty: HF_DATASETS_CACHE)")
    check_duplicates: bool = knob(True, doc="look for repeated ids (memory grows with the corpus)")
    duplicate_ids: DuplicateIds = setting(
        "keep", doc="a repeated id: keep (indexed as id#2), first (skipped, counted) or refuse"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.name:
            raise ConfigError("[corpus] source = hub needs `name` (a dataset id or folder)")
        check_duplicate_policy(self.check_duplicates, self.duplicate_ids)

    def local_files(self) -> list[Path]:
        """The local files of the dataset: `name`'s when a folder, or those of `data_files`."""
        return local_files(self.name, self.data_files)


class HubCorpus:
    """Documents of a Hugging Face dataset (a Hub name, a local dataset folder or a builder).

    `name` (a Hub name, a local folder or a builder such as "json"), `config`, `split`,
    `revision`, `data_files` and `cache_dir` go to `datasets.load_dataset` (streamed by
    default, so memory does not grow with the corpus). Rows become documents as in
    `FileCorpus`; a row without an id gets "{name}:{split}:{row number from 1}".
    """

    def __init__(self, settings: HubCorpusSettings, *, progress: bool | None = None) -> None:
        self.settings = settings
        self.progress = progress
        self.files: list[str] = []
        self.stats = StepStats("corpus")

    @property
    def origin(self) -> str:
        """How documents of this corpus are named in ids and messages."""
        return f"{self.settings.name}:{self.settings.split}"

    def load(self) -> Any:
        """The (iterable) dataset split; InputError naming the dataset when it cannot load."""
        return load_split(self.settings, self.settings.data_files)

    def __iter__(self) -> Iterator[Document]:
        """Yield the split's documents, starting fresh counters and duplicate checks."""
        self.stats = StepStats("corpus")
        settings = self.settings
        parser = DocumentParser(
            self.stats,
            settings,
            check_duplicates=settings.check_duplicates,
            duplicate_ids=settings.duplicate_ids,
        )
        dataset = self.load()
        disable = None if self.progress is None else not self.progress
        rows = tqdm(dataset, desc=self.origin, unit="row", disable=disable)
        number = 0
        iterator = iter(rows)
        while True:
            try:
                row = next(iterator)
            except StopIteration:
                break
            except Exception as exc:
                raise InputError(
                    f"reading the dataset failed after {number} rows: {type(exc).__name__}: {exc}",
                    path=self.origin,
                ) from exc
            number += 1
            document = parser.parse(row, origin=self.origin, path=self.origin, line=number)
            if document is not None:
                yield document
        if number and not self.stats.counts["documents"]:
            missing = self.stats.errors["missing_text"]
            if missing == number:
                raise InputError(
                    f"none of the {number} rows has the text field (choose text_field)",
                    path=self.origin,
                    field=self.settings.text_field,
                )
