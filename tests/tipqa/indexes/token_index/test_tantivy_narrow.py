"""Queries with common tokens, answered from their candidates: exact against brute force."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support.ranking_support import DEPTHS, QUERIES, corpus
from support.token_oracle import oracle

from tipqa.core.records import Document
from tipqa.indexes.token_index import tantivy_narrow
from tipqa.indexes.token_index.base import TokenResult
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex
from tipqa.indexes.token_index.tantivy_narrow import most_candidates

CORPUS: list[Document] = corpus()


@cache
def expected(keywords: tuple[str, ...], aliases: tuple[str, ...], k: int) -> TokenResult:
    """The brute-force answer on the ranking corpus."""
    return oracle(CORPUS, list(keywords), list(aliases), k)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TantivyTokenIndex:
    """The ranking corpus of `test_tantivy_rank`."""
    built = TantivyTokenIndex.at(tmp_path_factory.mktemp("narrow") / "index", threads=1)
    built.build(CORPUS)
    return built


@pytest.fixture
def narrowed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each search was answered from its candidates (True) or as written."""
    answered: list[bool] = []
    search = tantivy_narrow.search

    def recording(*args: Any) -> Any:
        result = search(*args)
        answered.append(result is not None)
        return result

    monkeypatch.setattr(tantivy_narrow, "search", recording)
    return answered


@pytest.mark.parametrize("common", [0, 20, 300, 1000])
@pytest.mark.parametrize("read_blocks", [1e-9, 0.1, 1.0])
def test_every_threshold_gives_the_brute_force_answer(
    index: TantivyTokenIndex,
    monkeypatch: pytest.MonkeyPatch,
    narrowed: list[bool],
    common: int,
    read_blocks: float,
) -> None:
    monkeypatch.setattr(tantivy_narrow, "COMMON_DOCS", common)
    monkeypatch.setattr(tantivy_narrow, "READ_BLOCKS", read_blocks)
    for keywords, aliases in QUERIES:
        for k in DEPTHS:
            truth = expected(tuple(keywords), tuple(aliases), k)
            assert index.search(keywords, aliases, k) == truth, (keywords, aliases, k)
    if common:  # some of the queries' tokens are rare: those queries have few candidates
        assert any(narrowed), "no query was answered from its candidates"


def test_long_candidates_are_counted_from_positions(
    index: TantivyTokenIndex, monkeypatch: pytest.MonkeyPatch, narrowed: list[bool]
) -> None:
    monkeypatch.setattr(tantivy_narrow, "COMMON_DOCS", 20)
    monkeypatch.setattr(tantivy_narrow, "READ_BLOCKS", 1e-9)
    monkeypatch.setattr(tantivy_narrow, "SHORT_BYTES", 0)
    for keywords, aliases in QUERIES:
        truth = expected(tuple(keywords), tuple(aliases), 20)
        assert index.search(keywords, aliases, 20) == truth, (keywords, aliases)
    assert any(narrowed)


def test_a_candidate_without_the_common_tokens_is_no_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, narrowed: list[bool]
) -> None:
    filler = [Document(f"f{i}", "of the and of the") for i in range(30)]
    docs = [
        Document("a", "Kouxno of Tiknothmei, and the kouxno of tiknothmei again."),
        Document("b", "Kouxno and Tiknothmei"),  # the rare tokens at the offsets, not "of"
        Document("c", "the kouxno of the tiknothmei"),
        *filler,
    ]
    index = TantivyTokenIndex.at(tmp_path / "i", threads=1)
    index.build(docs)
    monkeypatch.setattr(tantivy_narrow, "COMMON_DOCS", 10)
    monkeypatch.setattr(tantivy_narrow, "READ_BLOCKS", 0.001)
    for keywords, aliases in [([], ["kouxno of tiknothmei"]), (["the"], ["kouxno of"])]:
        assert index.search(keywords, aliases, 5) == oracle(docs, keywords, aliases, 5)
    result = index.search([], ["kouxno of tiknothmei"], 5)
    assert (result.total, [h.doc_id for h in result.hits]) == (1, ["a"])
    assert result.hits[0].score == 2.0
    assert narrowed == [True, True, True]


def test_the_bound_of_candidates() -> None:
    documents = {"the": 10**6, "of": 10**6, "rare": 3, "odd": 40, "city": 900}
    common = {"the", "of"}
    assert most_candidates([("the", "rare")], [("city",)], documents, common) == 3
    assert most_candidates([("the",)], [("odd",), ("city", "of")], documents, common) == 940
    assert most_candidates([], [("the", "of")], documents, common) == 10**6


def test_random_corpora_with_common_words_equal_brute_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, narrowed: list[bool]
) -> None:
    rng = random.Random(5)
    vocabulary = "the of a new york city la paris tower rare odd".split()
    weights = [40, 30, 20, 8, 8, 6, 5, 3, 3, 1, 1]
    docs = []
    for i in range(400):
        words = rng.choices(vocabulary, weights, k=rng.choice([4, 8, 30, 200]))
        docs.append(Document(f"d{i:04d}", " ".join(words)))
    index = TantivyTokenIndex.at(tmp_path / "i", threads=1)
    index.build(docs)
    monkeypatch.setattr(tantivy_narrow, "COMMON_DOCS", 150)
    monkeypatch.setattr(tantivy_narrow, "READ_BLOCKS", 0.01)

    def phrase() -> str:
        return " ".join(rng.choices(vocabulary, weights, k=rng.choice([1, 2, 3, 4])))

    for _ in range(200):
        keywords = [phrase() for _ in range(rng.choice([0, 1, 2]))]
        aliases = [phrase() for _ in range(rng.choice([1, 2, 3]))]
        k = rng.choice([1, 5, 50, 1000])
        expected = oracle(docs, keywords, aliases, k)
        assert index.search(keywords, aliases, k) == expected, (keywords, aliases, k)
    assert sum(narrowed) > 50
