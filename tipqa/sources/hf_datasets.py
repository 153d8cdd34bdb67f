"""`datasets.load_dataset` for the readers of Hugging Face datasets, with one kind of error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from tipqa.core.errors import InputError


class DatasetSplit(Protocol):
    """Settings that name one split of a dataset and how to load it."""

    @property
    def name(self) -> str: ...
    @property
    def config(self) -> str | None: ...
    @property
    def split(self) -> str: ...
    @property
    def revision(self) -> str | None: ...
    @property
    def streaming(self) -> bool: ...
    @property
    def cache_dir(self) -> str | None: ...


def load_split(source: DatasetSplit, data_files: Sequence[str] | None = None) -> Any:
    """The split (a Hub name, a local folder or a builder such as "json", with `data_files`).

    An InputError names the dataset, its configuration and split when it cannot be loaded.
    """
    import datasets

    options: dict[str, Any] = {"split": source.split, "streaming": source.streaming}
    if data_files is not None:
        options["data_files"] = list(data_files)
    if source.cache_dir is not None:
        options["cache_dir"] = source.cache_dir
    if source.revision is not None:
        options["revision"] = source.revision
    where = f"{source.name}:{source.config}:{source.split}"
    try:
        return datasets.load_dataset(source.name, source.config, **options)
    except Exception as exc:
        raise InputError(
            f"cannot load dataset {source.name!r} (config {source.config!r}, split "
            f"{source.split!r}): {type(exc).__name__}: {exc}",
            path=where,
        ) from exc
