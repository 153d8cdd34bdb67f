"""Corpus reader for a Hugging Face dataset, streamed through `datasets.load_dataset`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from tipqa.corpus.base import DocumentParser
from tipqa.errors import ConfigError, InputError
from tipqa.records import Document
from tipqa.settings import Settings, knob
from tipqa.stats import StageStats


@dataclass(frozen=True)
class HubCorpusSettings(Settings):
    """[corpus] of a Hugging Face dataset (`source = hub`), streamed; see `HubCorpus`."""

    name: str = ""
    config: str | None = None
    split: str = "train"
    revision: str | None = None
    data_files: tuple[str, ...] | None = None
    text_field: str = "text"
    id_field: str | None = None
    meta_fields: tuple[str, ...] | None = None
    strict: bool = False
    max_chars: int | None = None
    streaming: bool = knob(True)
    cache_dir: str | None = knob(None)
    check_duplicates: bool = knob(True, doc="count repeated ids (memory grows with the corpus)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.name:
            raise ConfigError("[corpus] source = hub needs `name` (a dataset id or folder)")


def open_hub(settings: HubCorpusSettings, *, progress: bool | None = None) -> HubCorpus:
    """The corpus of these settings."""
    return HubCorpus(
        settings.name,
        config=settings.config,
        split=settings.split,
        revision=settings.revision,
        text_field=settings.text_field,
        id_field=settings.id_field,
        meta_fields=None if settings.meta_fields is None else list(settings.meta_fields),
        data_files=None if settings.data_files is None else list(settings.data_files),
        streaming=settings.streaming,
        cache_dir=settings.cache_dir,
        strict=settings.strict,
        max_chars=settings.max_chars,
        check_duplicates=settings.check_duplicates,
        progress=progress,
    )


class HubCorpus:
    """Documents of a Hugging Face dataset (a Hub name, a local dataset folder or a builder).

    `name` (a Hub name, a local folder or a builder such as "json"), `config`, `split`,
    `data_files` and `cache_dir` go to `datasets.load_dataset` (streamed by
    default, so memory does not grow with the corpus). Rows become documents as in
    `FileCorpus`; a row without an id gets "{name}:{split}:{row number from 1}". Through the
    registry, pass `name` in a settings dict (`CORPUS_READERS.create_from("hub", {...})`):
    `Registry.create`'s own first parameter is also called `name`.
    """

    def __init__(
        self,
        name: str,
        *,
        config: str | None = None,
        split: str = "train",
        revision: str | None = None,
        text_field: str = "text",
        id_field: str | None = None,
        meta_fields: list[str] | None = None,
        data_files: str | Sequence[str] | dict[str, Any] | None = None,
        streaming: bool = True,
        cache_dir: str | None = None,
        strict: bool = False,
        max_chars: int | None = None,
        check_duplicates: bool = True,
        progress: bool | None = None,
    ) -> None:
        if not name:
            raise InputError("a dataset name is required")
        self.name = name
        self.config = config
        self.split = split
        self.revision = revision
        self.data_files = data_files
        self.streaming = streaming
        self.cache_dir = cache_dir
        self.text_field = text_field
        self.progress = progress
        self.files: list[str] = []
        self.stats = StageStats("corpus")
        self._parser_options: dict[str, Any] = {
            "text_field": text_field,
            "id_field": id_field,
            "meta_fields": meta_fields,
            "strict": strict,
            "max_chars": max_chars,
            "check_duplicates": check_duplicates,
        }

    @property
    def origin(self) -> str:
        """How documents of this corpus are named in ids and messages."""
        return f"{self.name}:{self.split}"

    def load(self) -> Any:
        """The (iterable) dataset split; InputError naming the dataset when it cannot load."""
        import datasets

        options: dict[str, Any] = {"split": self.split, "streaming": self.streaming}
        if self.data_files is not None:
            options["data_files"] = self.data_files
        if self.cache_dir is not None:
            options["cache_dir"] = self.cache_dir
        if self.revision is not None:
            options["revision"] = self.revision
        try:
            return datasets.load_dataset(self.name, self.config, **options)
        except Exception as exc:
            raise InputError(
                f"cannot load dataset {self.name!r} (config {self.config!r}, split "
                f"{self.split!r}): {type(exc).__name__}: {exc}",
                path=self.name,
            ) from exc

    def __iter__(self) -> Iterator[Document]:
        """Yield the split's documents, starting fresh counters and duplicate checks."""
        self.stats = StageStats("corpus")
        parser = DocumentParser(self.stats, **self._parser_options)
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
                    field=self.text_field,
                )
