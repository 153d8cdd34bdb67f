"""Index builds: one pass for embedded backends, shard by shard for sharded ones."""

from __future__ import annotations

from pathlib import Path

from tipqa import indexing
from tipqa.corpus.files import FileCorpus
from tipqa.jsonl import read_json
from tipqa.records import Document


class LedgerIndex:
    """A sharded token index double: keeps documents and a ledger of finished shards."""

    def __init__(self) -> None:
        self.documents: dict[str, str] = {}
        self.ledger: dict[str, dict] = {}
        self.finalized: list[str] | None = None

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


def test_sharded_build_then_finalize(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    index = LedgerIndex()
    assert indexing.builds_in_shards(index)
    shards = indexing.corpus_shards(corpus)
    for shard in shards:
        indexing.index_token_shard(corpus, shard, index)
    stats = indexing.finalize_index(index, shards, "token_index", tmp_path / "token.stats.json")
    assert index.finalized == shards and set(index.documents) == {"a", "b", "c"}
    assert read_json(tmp_path / "token.stats.json")["counts"] == stats.to_dict()["counts"]
    assert stats.counts["documents"] == 3


def test_embedded_backends_build_in_one_pass() -> None:
    from tipqa.token_index.tantivy import TantivyTokenIndex

    assert not indexing.builds_in_shards(TantivyTokenIndex.__new__(TantivyTokenIndex))
