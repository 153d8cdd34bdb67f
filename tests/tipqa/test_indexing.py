"""Index builds: one pass for embedded backends, shard by shard for sharded ones."""

from __future__ import annotations

from pathlib import Path

from tipqa import indexing
from tipqa.corpus.files import FileCorpus
from tipqa.fingerprint import StepRecord
from tipqa.jsonl import read_json
from tipqa.layout import TOKEN_INDEX
from tipqa.records import Document


class LedgerIndex:
    """A sharded token index double: keeps documents and a ledger of finished shards."""

    def __init__(self) -> None:
        self.documents: dict[str, str] = {}
        self.ledger: dict[str, dict] = {}
        self.finalized: list[str] | None = None
        self.started = 0

    def start_build(self) -> None:
        self.started += 1

    def build_shard(self, documents, shard: str) -> dict[str, float]:
        for doc in documents:
            self.documents.setdefault(doc.id, doc.text)
        self.record_shard(shard, {"documents": len(self.documents)})
        return self.ledger[shard]

    def shard_done(self, shard: str) -> bool:
        return shard in self.ledger

    def record_shard(self, shard: str, counts: dict) -> None:
        self.ledger[shard] = counts

    def finalize(self, shards: list[str]) -> dict[str, float]:
        assert all(self.shard_done(s) for s in shards)
        self.finalized = list(shards)
        return {"documents": len(self.documents), "shards": len(shards)}


def write_corpus(folder: Path) -> FileCorpus:
    folder.mkdir()
    for part, ids in enumerate([["a", "b"], ["c"]]):
        lines = [f'{{"id": "{i}", "text": "text of {i}"}}' for i in ids]
        (folder / f"part-{part}.jsonl").write_text("\n".join(lines) + "\n")
    return FileCorpus(str(folder))


def test_shards_are_the_corpus_files_in_order(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    shards = indexing.corpus_shards(corpus)
    assert [Path(s).name for s in shards] == ["part-0.jsonl", "part-1.jsonl"]
    assert [d.id for d in indexing.shard_documents(corpus, shards[1])] == ["c"]


def test_a_corpus_without_files_is_one_shard() -> None:
    class Stream:
        stats = None

        def __iter__(self):
            return iter([Document("x", "y")])

    assert indexing.corpus_shards(Stream()) == [indexing.WHOLE_CORPUS]
    assert [d.id for d in indexing.shard_documents(Stream(), indexing.WHOLE_CORPUS)] == ["x"]


def test_sharded_build_started_once_then_finalized(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    index = LedgerIndex()
    assert isinstance(index, indexing.ShardedTokenIndex)
    record = StepRecord(TOKEN_INDEX, {})
    indexing.start_index(index, tmp_path / "start.stats.json", TOKEN_INDEX, record)
    shards = indexing.corpus_shards(corpus)
    for number, shard in enumerate(shards):
        path = tmp_path / f"file-{number}.stats.json"
        indexing.index_token_shard(corpus, shard, index, path, record)
        assert read_json(path)["info"] == {"file": shard}
    stats_path = tmp_path / "token.stats.json"
    stats = indexing.finalize_index(index, shards, TOKEN_INDEX, stats_path, record)
    assert index.started == 1
    assert index.finalized == shards and set(index.documents) == {"a", "b", "c"}
    assert read_json(stats_path)["counts"] == stats.to_dict()["counts"]
    assert read_json(stats_path)["fingerprint"] == record.fingerprint
    assert stats.counts["documents"] == 3


def test_which_backends_build_in_parts() -> None:
    from tipqa.token_index.elasticsearch import ElasticsearchTokenIndex
    from tipqa.token_index.tantivy import TantivyTokenIndex
    from tipqa.vector_index.elasticsearch import ElasticsearchVectorIndex
    from tipqa.vector_index.faiss import FaissVectorIndex

    assert not indexing.builds_in_parts(TantivyTokenIndex)
    assert not indexing.builds_in_parts(FaissVectorIndex)
    assert indexing.builds_in_parts(ElasticsearchTokenIndex)
    assert indexing.builds_in_parts(ElasticsearchVectorIndex)


def test_a_folder_of_another_build_is_emptied(tmp_path: Path) -> None:
    folder = tmp_path / "index" / "vector"
    indexing.fresh_folder(folder, "build-a")
    folder.mkdir()
    (folder / "part").write_text("of build a")
    indexing.fresh_folder(folder, "build-a")
    assert (folder / "part").exists()
    indexing.fresh_folder(folder, "build-b")
    assert not folder.exists()
    assert (tmp_path / "index" / "vector.build").read_text().strip() == "build-b"
