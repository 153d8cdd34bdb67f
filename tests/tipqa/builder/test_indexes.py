"""Index builds: one pass for embedded backends, part by part for sharded ones."""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest

from tipqa.builder import indexes
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json
from tipqa.core.records import Document
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step
from tipqa.indexes.vector_index.faiss import MANIFEST, FaissVectorIndex
from tipqa.sources.corpus.files import FileCorpus


class LedgerIndex:
    """A sharded token index double: keeps documents and a ledger of finished parts."""

    def __init__(self) -> None:
        self.documents: dict[str, str] = {}
        self.ledger: dict[str, dict] = {}
        self.finalized: list[str] | None = None
        self.started = 0

    def start_build(self) -> None:
        self.started += 1

    def build_part(self, documents, part: str) -> dict[str, float]:
        for doc in documents:
            self.documents.setdefault(doc.id, doc.text)
        self.record_part(part, {"documents": len(self.documents)})
        return self.ledger[part]

    def part_done(self, part: str) -> bool:
        return part in self.ledger

    def record_part(self, part: str, counts: dict) -> None:
        self.ledger[part] = counts

    def finalize(self, parts: list[str]) -> dict[str, float]:
        assert all(self.part_done(s) for s in parts)
        self.finalized = list(parts)
        return {"documents": len(self.documents), "parts": len(parts)}


def write_corpus(folder: Path) -> FileCorpus:
    folder.mkdir()
    for part, ids in enumerate([["a", "b"], ["c"]]):
        lines = [f'{{"id": "{i}", "text": "text of {i}"}}' for i in ids]
        (folder / f"part-{part}.jsonl").write_text("\n".join(lines) + "\n")
    return FileCorpus.of(str(folder))


def test_parts_are_the_corpus_files_in_order(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    parts = indexes.corpus_parts(corpus)
    assert [Path(s).name for s in parts] == ["part-0.jsonl", "part-1.jsonl"]
    assert [d.id for d in indexes.part_documents(corpus, parts[1])] == ["c"]


def test_a_corpus_without_files_is_one_part() -> None:
    class Stream:
        stats = None

        def __iter__(self):
            return iter([Document("x", "y")])

    assert indexes.corpus_parts(Stream()) == [indexes.WHOLE_CORPUS]
    assert [d.id for d in indexes.part_documents(Stream(), indexes.WHOLE_CORPUS)] == ["x"]


def test_a_build_in_parts_is_started_once_then_finalized(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    index = LedgerIndex()
    assert isinstance(index, indexes.PartedTokenIndex)
    record = StepRecord(Step.TOKEN_INDEX, {})
    indexes.start_index(index, tmp_path / "start.stats.json", Step.TOKEN_INDEX, record)
    parts = indexes.corpus_parts(corpus)
    for number, part in enumerate(parts):
        path = tmp_path / f"file-{number}.stats.json"
        indexes.index_token_part(corpus, part, index, path, record)
        assert read_json(path)["info"] == {"file": part}
    stats_path = tmp_path / "token.stats.json"
    stats = indexes.finalize_index(index, parts, Step.TOKEN_INDEX, stats_path, record)
    assert index.started == 1
    assert index.finalized == parts and set(index.documents) == {"a", "b", "c"}
    assert read_json(stats_path)["counts"] == stats.to_dict()["counts"]
    assert read_json(stats_path)["fingerprint"] == record.fingerprint
    assert stats.counts["documents"] == 3


def test_which_backends_build_in_parts() -> None:
    from tipqa.indexes.token_index.elasticsearch import ElasticsearchTokenIndex
    from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
    from tipqa.indexes.vector_index.elasticsearch import ElasticsearchVectorIndex
    from tipqa.indexes.vector_index.faiss import FaissVectorIndex

    assert not indexes.builds_in_parts(TantivyTokenIndex)
    assert not indexes.builds_in_parts(FaissVectorIndex)
    assert indexes.builds_in_parts(ElasticsearchTokenIndex)
    assert indexes.builds_in_parts(ElasticsearchVectorIndex)


def test_a_folder_of_another_build_is_emptied(tmp_path: Path) -> None:
    folder = tmp_path / "index" / "vector"
    indexes.fresh_folder(folder, "build-a")
    folder.mkdir()
    (folder / "part").write_text("of build a")
    indexes.fresh_folder(folder, "build-a")
    assert (folder / "part").exists()
    indexes.fresh_folder(folder, "build-b")
    assert not folder.exists()
    assert (tmp_path / "index" / "vector.build").read_text().strip() == "build-b"


def test_a_build_in_parts_sums_the_reader_counts_of_its_parts(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    with open(corpus.files[1], "a") as handle:
        handle.write('{"id": "d", "text": \n{"id": "a", "text": "a again"}\n')
    corpus = FileCorpus.of(corpus.files)
    index, record = LedgerIndex(), StepRecord(Step.TOKEN_INDEX, {})
    parts = indexes.corpus_parts(corpus)
    part_stats = [tmp_path / f"file-{number}.stats.json" for number in range(len(parts))]
    for part, path in zip(parts, part_stats, strict=True):
        indexes.index_token_part(FileCorpus.of(corpus.files), part, index, path, record)
    stats_path = tmp_path / "token.stats.json"
    indexes.finalize_index(index, parts, Step.TOKEN_INDEX, stats_path, record, part_stats)
    written = read_json(stats_path)
    assert written["counts"]["corpus.documents"] == 4
    assert written["counts"]["corpus.files"] == 2
    assert written["errors"] == {"invalid_json": 1}
    assert written["counts"]["documents"] == 3


class WordEmbedder:
    """An embedder double: tokens are words, vectors are seeded by the text."""

    name = "words"
    dimension = 8
    max_seq_length = 40
    similarity = "cosine"

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(text.split()) + 2 for text in texts]

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=8) for t in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), 8)

    encode_queries = encode_passages


class CountedPasses:
    """A corpus that counts how often it is read from the start."""

    def __init__(self, corpus: FileCorpus) -> None:
        self.corpus = corpus
        self.passes = 0

    @property
    def stats(self) -> StepStats:
        return self.corpus.stats

    def __iter__(self) -> Iterator[Document]:
        self.passes += 1
        return iter(self.corpus)


class ReadAll:
    """A token index double that consumes the documents."""

    def build(self, documents: Iterable[Document]) -> dict[str, float]:
        return {"documents": sum(1 for _ in documents)}


def skip_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    found = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return [message for message in found if message.startswith("skipped record")]


def test_the_vector_build_reads_once_says_nothing_twice_and_counts_what_the_manifest_holds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "corpus.jsonl"
    words = " ".join(f"word{n}" for n in range(90))
    lines = [f'{{"id": "d{n}", "text": "Document {n} says: {words}"}}' for n in range(12)]
    lines.insert(2, '{"id": "broken", "text": ')
    lines.append('{"id": "d1", "text": "A second document with the id of another."}')
    path.write_text("\n".join(lines) + "\n")
    corpus = CountedPasses(FileCorpus.of(path))
    record = StepRecord(Step.TOKEN_INDEX, {})
    with caplog.at_level(logging.DEBUG, logger="tipqa.sources.corpus.base"):
        indexes.build_token_index(corpus, ReadAll(), tmp_path / "token.stats.json", record)
        assert len(skip_warnings(caplog)) == 1 and corpus.passes == 1
        index = FaissVectorIndex.at(tmp_path / "vector", WordEmbedder.dimension, kind="flat")
        stats_path = tmp_path / "vector.stats.json"
        indexes.build_vector_index(corpus, WordEmbedder(), index, stats_path, record)
    assert corpus.passes == 2, "the chunk size is calibrated on the pass that indexes"
    assert len(skip_warnings(caplog)) == 1, "the token index build has said it"
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(r.getMessage().startswith("skipped record (invalid_json)") for r in debug)
    stats = read_json(stats_path)
    manifest = read_json(tmp_path / "vector" / MANIFEST)
    assert stats["counts"]["index.chunks"] == manifest["count"] == index.count()
    assert stats["counts"]["index.chunks_added"] == manifest["count"]
    assert stats["counts"]["index.chunks_duplicate"] == 0, "the repeated id is derived: d1#2"
    assert stats["counts"]["chunks"] == manifest["count"] > 12
    assert stats["errors"] == {"invalid_json": 1}
    assert stats["counts"]["corpus.duplicate_ids"] == 1


def test_a_build_in_parts_gives_a_repeated_id_the_id_a_pass_over_the_whole_corpus_gives(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "part-0.jsonl").write_text(
        '{"id": "a", "text": "first a"}\n{"id": "b", "text": "b"}\n'
    )
    (folder / "part-1.jsonl").write_text(
        '{"id": "a", "text": "second a"}\n{"id": "a", "text": "third a"}\n'
    )
    one_pass = {d.id: d.text for d in FileCorpus.of(str(folder))}
    assert one_pass == {"a": "first a", "b": "b", "a#2": "second a", "a#3": "third a"}
    repeats = tmp_path / "repeats.json"
    assert indexes.note_repeats(FileCorpus.of(str(folder)), repeats) == 2
    index, record = LedgerIndex(), StepRecord(Step.TOKEN_INDEX, {})
    parts = indexes.corpus_parts(FileCorpus.of(str(folder)))
    for number, part in enumerate(reversed(parts)):  # parts run in any order
        corpus = indexes.with_repeats(FileCorpus.of(str(folder)), repeats)
        stats_path = tmp_path / f"file-{number}.stats.json"
        indexes.index_token_part(corpus, part, index, stats_path, record)
    assert index.documents == one_pass
    assert read_json(tmp_path / "file-0.stats.json")["info"]["corpus.renamed_ids"] == [
        f"a#2 ({folder / 'part-1.jsonl'}, line 1)",
        f"a#3 ({folder / 'part-1.jsonl'}, line 2)",
    ]
