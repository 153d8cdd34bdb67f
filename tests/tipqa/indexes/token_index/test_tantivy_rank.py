"""Exact frequency ranking of the tantivy index against a brute-force reference."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.ranking_support import DEPTHS, QUERIES, corpus
from support.token_oracle import oracle

from tipqa.core.records import Document
from tipqa.core.text import tokenize
from tipqa.indexes.token_index import tantivy_rank
from tipqa.indexes.token_index.base import TokenResult
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex

CORPUS: list[Document] = corpus()
TRICKY: list[str] = orjson.loads(
    (Path(__file__).parents[3] / "data" / "token_index" / "tricky.json").read_bytes()
)


@cache
def expected(keywords: tuple[str, ...], aliases: tuple[str, ...]) -> TokenResult:
    """Every match of the query, by the oracle."""
    return oracle(CORPUS, list(keywords), list(aliases), 10**9)


def first(result: TokenResult, k: int) -> TokenResult:
    return TokenResult(result.total, result.hits[:k])


@pytest.fixture(scope="module", params=[1, 2], ids=["one-writer", "two-workers"])
def index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The ranking corpus, built by one writer and by two worker processes."""
    built = TantivyTokenIndex.at(
        tmp_path_factory.mktemp("rank") / "index", threads=request.param, heap_mb=64
    )
    counts = built.build(CORPUS)
    assert counts["workers"] == request.param and counts["duplicates"] == 1
    return built


@pytest.mark.parametrize(("keywords", "aliases"), QUERIES)
def test_hits_order_and_totals_equal_brute_force(
    index: TantivyTokenIndex, keywords: list[str], aliases: list[str]
) -> None:
    truth = expected(tuple(keywords), tuple(aliases))
    for k in DEPTHS:
        assert index.search(keywords, aliases, k) == first(truth, k), (keywords, aliases, k)
    assert index.search(keywords, aliases, 0) == TokenResult(truth.total, [])


def test_the_corpus_is_hard_where_it_should_be(index: TantivyTokenIndex) -> None:
    broad = index.search(["New York"], ["New York City"], 3)
    assert broad.total > 1000
    assert [h.doc_id for h in broad.hits] == ["long-a", "long-c", "long-b"]
    assert broad.hits[0].score == broad.hits[1].score  # a tie, broken by id
    # "york" is everywhere in long-y, but "new york" once: its bound is loose, its count not
    phrase = index.search(["new york"], ["york"], 5)
    assert phrase.hits[0].doc_id == "long-y"
    assert index.search([], ["la la"], 1).hits[0].score == 100.0  # overlapping: 2 per "la la la"


def test_bm25_pool_misses_the_long_documents(index: TantivyTokenIndex) -> None:
    pooled = TantivyTokenIndex.at(index.path, ranking="bm25-pool", rank_pool=100)
    exact = index.search(["New York"], ["New York City"], 10)
    approximate = pooled.search(["New York"], ["New York City"], 10)
    assert approximate.total == exact.total
    assert not {h.doc_id for h in approximate.hits} & {"long-a", "long-b", "long-c"}


def test_bm25_pool_is_exact_up_to_its_pool(index: TantivyTokenIndex) -> None:
    pooled = TantivyTokenIndex.at(index.path, ranking="bm25-pool", rank_pool=10**6)
    for keywords, aliases in QUERIES:
        truth = expected(tuple(keywords), tuple(aliases))
        assert pooled.search(keywords, aliases, 50) == first(truth, 50), (keywords, aliases)
        assert index.search(keywords, aliases, 50) == first(truth, 50), (keywords, aliases)


@pytest.mark.parametrize("target", [0.0, 10.0**9])
def test_every_tier_schedule_gives_the_same_answer(
    index: TantivyTokenIndex, monkeypatch: pytest.MonkeyPatch, target: float
) -> None:
    monkeypatch.setattr(tantivy_rank, "TIER_TARGET", target)
    for keywords, aliases in QUERIES:
        truth = expected(tuple(keywords), tuple(aliases))
        assert index.search(keywords, aliases, 5) == first(truth, 5), (keywords, aliases)


def test_long_documents_are_counted_from_positions(
    index: TantivyTokenIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tantivy_rank, "SHORT_BYTES", 0)  # no document read from the store
    monkeypatch.setattr(
        tantivy_rank.Ranker, "stored", lambda *a: pytest.fail("read the stored text")
    )
    for keywords, aliases in QUERIES[:4]:
        truth = expected(tuple(keywords), tuple(aliases))
        found = index.search(keywords, aliases, 20)
        assert [(h.doc_id, h.score) for h in found.hits] == [
            (h.doc_id, h.score) for h in truth.hits[:20]
        ]


def test_random_corpora_equal_brute_force(tmp_path: Path) -> None:
    rng = random.Random(12)
    vocabulary = "new york city la land paris tower the of a".split()
    docs = []
    for _ in range(300):
        n = rng.choice([3, 5, 8, 20, 50]) if rng.random() > 0.03 else rng.choice([500, 2000])
        words = [rng.choice(vocabulary[: rng.randint(3, len(vocabulary))]) for _ in range(n)]
        docs.append(Document(f"d{rng.randrange(10**4):05d}", " ".join(words).capitalize()))
    index = TantivyTokenIndex.at(tmp_path / "i", threads=1, heap_mb=64)
    index.build(docs)

    def phrase() -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(rng.choice([1, 1, 2, 3])))

    for _ in range(150):
        keywords = [phrase() for _ in range(rng.choice([0, 1, 2]))]
        aliases = [phrase() for _ in range(rng.choice([1, 2, 3]))]
        k = rng.choice([1, 3, 10, 50, 1000])
        assert index.search(keywords, aliases, k) == oracle(docs, keywords, aliases, k), (
            keywords,
            aliases,
            k,
        )


def test_frequencies_in_tricky_text_equal_brute_force(tmp_path: Path) -> None:
    docs = [Document(f"t{i:02d}", text * (1 + i % 3)) for i, text in enumerate(TRICKY)]
    index = TantivyTokenIndex.at(tmp_path / "i", threads=1, heap_mb=64)
    index.build(docs)
    queries = {t for text in TRICKY for t in tokenize(text)}
    for token in sorted(queries):
        assert index.search([], [token], 50) == oracle(docs, [], [token], 50), token
