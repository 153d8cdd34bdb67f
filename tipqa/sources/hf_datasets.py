"""`datasets.load_dataset` for the readers of Hugging Face datasets, with one kind of error.

A local dataset folder is read as it is now. `datasets` keeps a copy of what it loads in its
cache, and for a local folder the copy's key is made of the folder's name and configuration,
not of its files: a second folder of the same name (every build's is `hub/`), or the same
folder rebuilt, would be read from the first one's copy (and even a stream takes its columns
from there). So a local folder is streamed (its files read as they are) with a cache of its
own that is thrown away at once, and its files are what identify it (`local_files`, which the
build's fingerprints use).
"""

from __future__ import annotations

import glob
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import folder_files


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


@runtime_checkable
class LocalDataset(Protocol):
    """Settings of a dataset that may be local files (a folder, or a builder's data files)."""

    def local_files(self) -> list[Path]:
        """The local files the dataset is read from (none for a dataset on the Hub)."""
        ...


def local_files(name: str, data_files: Sequence[str] | None = None) -> list[Path]:
    """The files of a local dataset folder `name` (hidden ones left out), or the local files
    that `data_files` name, sorted; none for a dataset on the Hub."""
    if Path(name).is_dir():
        return folder_files(name)
    named = [Path(match) for pattern in data_files or () for match in glob.glob(pattern)]
    return sorted({path for path in named if path.is_file()})


def load_dataset(name: str, config: str | None, **options: Any) -> Any:
    """`datasets.load_dataset(name, config, **options)`; a local folder is streamed with a
    cache of its own, never read through another's copy (see the module)."""
    import datasets

    if not Path(name).is_dir():
        return datasets.load_dataset(name, config, **options)
    with tempfile.TemporaryDirectory(prefix="tipqa-dataset-") as cache:
        local = {**options, "streaming": True, "cache_dir": cache}
        return datasets.load_dataset(name, config, **local)


def load_split(source: DatasetSplit, data_files: Sequence[str] | None = None) -> Any:
    """The split (a Hub name, a local folder or a builder such as "json", with `data_files`).

    An InputError names the dataset, its configuration and split when it cannot be loaded.
    """
    options: dict[str, Any] = {"split": source.split, "streaming": source.streaming}
    if data_files is not None:
        options["data_files"] = list(data_files)
    if source.cache_dir is not None:
        options["cache_dir"] = source.cache_dir
    if source.revision is not None:
        options["revision"] = source.revision
    where = f"{source.name}:{source.config}:{source.split}"
    try:
        return load_dataset(source.name, source.config, **options)
    except Exception as exc:
        raise InputError(
            f"cannot load dataset {source.name!r} (config {source.config!r}, split "
            f"{source.split!r}): {type(exc).__name__}: {exc}",
            path=where,
        ) from exc
