"""Contract tests of ElasticsearchTokenIndex against a real cluster (TIPQA_ES_URL).

The same authored corpus and queries (tests/support/contract_support.py) go to Elasticsearch,
to the definition in `tipqa.core.text` (tests/support/token_oracle.py) and to the tantivy backend:
document sets, totals, frequencies and rank order must agree, and so must the BM25 rankings of free
text (`rank_texts`) of Elasticsearch and tantivy. Skipped unless TIPQA_ES_URL is set
(and ES_API_KEY if the cluster needs one).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.contract_support import ANALYZED, CORPUS, QUERIES
from support.token_oracle import oracle

from tipqa.core.records import Document
from tipqa.core.text import tokenize
from tipqa.indexes.es.lifecycle import IncompleteBuild
from tipqa.indexes.token_index import elasticsearch as es_module
from tipqa.indexes.token_index.elasticsearch import ElasticsearchTokenIndex

pytestmark = [
    pytest.mark.elasticsearch,
    pytest.mark.skipif(
        not os.environ.get("TIPQA_ES_URL"), reason="set TIPQA_ES_URL to test against a cluster"
    ),
]


def _drop(index: ElasticsearchTokenIndex) -> None:
    """Delete the index and its ledger."""
    index.client.indices.delete(index=[index.index, index.ledger_index], ignore_unavailable=True)


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[ElasticsearchTokenIndex, dict[str, float]]]:
    """The corpus built once into a fresh index (deleted afterwards)."""
    index = ElasticsearchTokenIndex.named(
        f"tipqa-test-{uuid.uuid4().hex[:12]}",
        threads=2,
        bulk_chunk_docs=7,
        bm25=True,
        progress=False,
    )
    try:
        yield index, index.build(CORPUS)
    finally:
        _drop(index)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The corpus in the tantivy backend."""
    tantivy_module = pytest.importorskip("tipqa.indexes.token_index.tantivy")
    index = tantivy_module.TantivyTokenIndex.at(
        tmp_path_factory.mktemp("tantivy") / "index", threads=1
    )
    index.build(CORPUS)
    return index


def test_build_counts_and_completion(built: tuple) -> None:
    index, counts = built
    assert counts["documents"] == 22
    assert counts["duplicates"] == 1
    assert counts["empty"] == 1
    assert counts["rejected"] == 0
    assert counts["bytes"] > 0 and counts["docs_per_second"] > 0
    assert index.count() == 22
    assert index.is_complete()
    assert index.part_done("all")


def test_analyzer_equals_tokenize(built: tuple) -> None:
    index, _ = built
    for text in ANALYZED:
        response = index.client.indices.analyze(index=index.index, analyzer="tipqa_text", text=text)
        assert [t["token"] for t in response["tokens"]] == tokenize(text), ascii(text)


@pytest.mark.parametrize(("keywords", "aliases"), QUERIES)
def test_search_equals_the_definition(built: tuple, keywords: list, aliases: list) -> None:
    index, _ = built
    assert index.search(keywords, aliases, 100) == oracle(CORPUS, keywords, aliases, 100)
    assert index.search(keywords, aliases, 2) == oracle(CORPUS, keywords, aliases, 2)
    assert index.search(keywords, aliases, 0).total == oracle(CORPUS, keywords, aliases, 0).total


def test_search_equals_tantivy(built: tuple, embedded: Any) -> None:
    index, _ = built
    for keywords, aliases in QUERIES:
        assert index.search(keywords, aliases, 100) == embedded.search(keywords, aliases, 100)
    assert index.count() == embedded.count()


def test_bm25_ranking_equals_tantivy(built: tuple, embedded: Any) -> None:
    index, _ = built
    texts = [
        "When was the Eiffel Tower completed?",
        "Who walked on the Moon during Apollo 11?",
        "Mount Everest in Nepal",
        "Victor Hugo wrote Notre-Dame de Paris",
        "Istanbul or Constantinople",
        "the",
        "!!! Atlantis",
    ]
    for n in (2, 100):
        ranked = index.rank_texts(texts, n)
        assert ranked == embedded.rank_texts(texts, n)
    assert ranked[0][:2] == ["d01", "d03"] and ranked[-1] == []


def test_paging_with_search_after(built: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    index, _ = built
    monkeypatch.setattr(es_module, "PAGE_SIZE", 2)
    assert index.search(["Paris"], ["Paris"], 5) == oracle(CORPUS, ["Paris"], ["Paris"], 5)


def test_get_returns_stored_documents(built: tuple) -> None:
    index, _ = built
    found = index.get(["d04", "d01", "missing", "d04"])
    assert found == {
        "d04": Document("d04", CORPUS[3].text, {"k": 1}),
        "d01": Document("d01", CORPUS[0].text, {}),
    }


def test_rebuild_is_reused_and_shards_never_duplicate(built: tuple) -> None:
    index, _ = built
    assert index.build(CORPUS) == {"documents": 22.0, "reused": 1}
    again = ElasticsearchTokenIndex.named(index.index, bm25=True, progress=False)
    counts = again.build_part(CORPUS, "again")
    assert counts["documents"] == 0 and counts["duplicates"] == 23
    assert again.build_part([], "again")["reused"] == 1
    again.finalize(["all", "again"])
    assert again.count() == 22 and again.is_complete()


def test_sharded_parallel_build_equals_single_build(built: tuple) -> None:
    single, _ = built
    name = f"tipqa-test-{uuid.uuid4().hex[:12]}"
    parts = {"part-a": CORPUS[:12], "part-b": CORPUS[12:]}
    workers = [ElasticsearchTokenIndex.named(name, progress=False) for _ in parts]
    try:
        errors: list[BaseException] = []

        def run(worker: ElasticsearchTokenIndex, shard: str) -> None:
            try:
                worker.build_part(parts[shard], shard)
            except BaseException as exc:
                errors.append(exc)

        threads = [
            threading.Thread(target=run, args=(w, s)) for w, s in zip(workers, parts, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        with pytest.raises(IncompleteBuild, match="part-c"):
            workers[0].finalize(["part-a", "part-b", "part-c"])
        assert not workers[0].is_complete()
        workers[0].finalize(["part-a", "part-b"])
        assert workers[1].is_complete()
        for keywords, aliases in QUERIES:
            assert workers[1].search(keywords, aliases, 100) == single.search(
                keywords, aliases, 100
            )
    finally:
        _drop(workers[0])


def test_deleted_index_is_not_complete_and_rebuilds(tmp_path: Path) -> None:
    index = ElasticsearchTokenIndex.named(f"tipqa-test-{uuid.uuid4().hex[:12]}", progress=False)
    try:
        index.build(CORPUS[:3])
        index.client.indices.delete(index=index.index)
        assert not index.is_complete() and not index.part_done("all")
        fresh = ElasticsearchTokenIndex.named(index.index, progress=False)
        counts: dict[str, Any] = fresh.build(CORPUS[:5])
        assert counts["documents"] == 5 and fresh.count() == 5
    finally:
        _drop(index)
