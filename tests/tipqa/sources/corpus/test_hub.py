"""Tests of the Hugging Face dataset corpus reader, on local dataset folders (no network)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from support.offline_support import offline_error

from tipqa.core.errors import InputError
from tipqa.sources.corpus import CORPUS_READERS, Corpus
from tipqa.sources.corpus.hub import HubCorpus, HubCorpusSettings

ROWS = [
    {"text": "First hub document.", "url": "https://example.org/1"},
    {"text": "", "url": "https://example.org/2"},
    {"text": "Third hub document.", "url": "https://example.org/3"},
]


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    """A local dataset folder with a train split as JSON lines."""
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "train.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in ROWS))
    return folder


@pytest.mark.parametrize("streaming", [True, False])
def test_local_dataset_folder_through_load_dataset(
    dataset_dir: Path, tmp_path: Path, streaming: bool
) -> None:
    corpus = HubCorpus(
        HubCorpusSettings(str(dataset_dir), streaming=streaming, cache_dir=str(tmp_path / "cache"))
    )
    docs = list(corpus)
    origin = f"{dataset_dir}:train"
    assert [(d.id, d.text, d.meta) for d in docs] == [
        (f"{origin}:1", "First hub document.", {"url": "https://example.org/1"}),
        (f"{origin}:3", "Third hub document.", {"url": "https://example.org/3"}),
    ]
    assert corpus.stats.errors["empty_text"] == 1
    assert corpus.stats.counts["documents"] == 2
    assert isinstance(corpus, Corpus)


def test_builder_with_data_files_and_id_field(dataset_dir: Path, tmp_path: Path) -> None:
    settings = {
        "name": "json",
        "data_files": str(dataset_dir / "train.jsonl"),
        "id_field": "url",
        "meta_fields": [],
        "cache_dir": str(tmp_path / "cache"),
    }
    corpus = CORPUS_READERS.create("hub", CORPUS_READERS.parse("hub", "corpus", settings))
    assert [d.id for d in corpus] == ["https://example.org/1", "https://example.org/3"]


def test_wrong_text_field_is_an_error(dataset_dir: Path, tmp_path: Path) -> None:
    corpus = HubCorpus(
        HubCorpusSettings(str(dataset_dir), text_field="body", cache_dir=str(tmp_path / "cache"))
    )
    with pytest.raises(InputError, match="none of the 3 rows") as info:
        list(corpus)
    assert info.value.field == "body"


def test_missing_local_dataset_is_an_input_error(tmp_path: Path) -> None:
    corpus = HubCorpus(
        HubCorpusSettings(str(tmp_path / "absent"), cache_dir=str(tmp_path / "cache"))
    )
    with pytest.raises(InputError, match="cannot load dataset"):
        list(corpus)


def test_hub_name_offline_gives_a_clear_error(tmp_path: Path) -> None:
    error = offline_error(
        "from tipqa.sources.corpus.hub import HubCorpus, HubCorpusSettings\n"
        f"settings = HubCorpusSettings('tipqa-tests/no-such-corpus', cache_dir={str(tmp_path)!r})\n"
        "list(HubCorpus(settings))"
    )
    assert error.startswith("tipqa-tests/no-such-corpus") and "cannot load dataset" in error
