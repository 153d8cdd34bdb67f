"""Tests of the embedded tantivy token index."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_json, write_json
from tipqa.core.records import Document
from tipqa.core.settings import parse
from tipqa.core.text import contains_phrase, count_phrase, tokenize
from tipqa.indexes.token_index import TOKEN_INDEXES, TokenResult
from tipqa.indexes.token_index.tantivy import (
    FORMAT_VERSION,
    MARKER,
    TantivySettings,
    TantivyTokenIndex,
)
from tipqa.indexes.token_index.tantivy_analysis import Tokenization, tokenization

SHARED_PASSAGES = Path("/work/shared/data/corpus/wikipedia-passages-1000.jsonl")

CORPUS = [
    Document("d01", "Marie Curie won the Nobel Prize in Physics in Warsaw.", {"year": 1903}),
    Document("d02", "The Nobel Prize went to Curie. Curie, Curie and Marie Curie again."),
    Document("d03", "Prize Nobel: the words in the wrong order, with Curie nearby."),
    Document("d04", "Marie Curie lived in Paris; the Nobel Prize committee met in Stockholm."),
    Document("d05", "Nothing about the laureate here, only Warsaw and Paris."),
    Document("d06", "A Nobel Prize for Sklodowska, also known as Marie Curie."),
]

TRICKY: list[str] = orjson.loads(
    (Path(__file__).parents[3] / "data" / "token_index" / "tricky.json").read_bytes()
)


def index_at(path: Path, **options: object) -> TantivyTokenIndex:
    """A tantivy index at `path` (one writer unless `threads` is given)."""
    return TantivyTokenIndex.at(path, **{"threads": 1, **options})


def build(path: Path, documents: list[Document], **options: object) -> TantivyTokenIndex:
    """A finished index of `documents` at `path`."""
    index = index_at(path, **options)
    index.build(documents)
    return index


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> TantivyTokenIndex:
    """The small authored corpus, indexed once for the read-only tests."""
    return build(tmp_path_factory.mktemp("tantivy") / "index", CORPUS)


def brute_force(documents: list[Document], keywords: list[str], aliases: list[str]) -> list[str]:
    """Ids of the documents that match the query by `tipqa.core.text` alone."""
    kws = [tokenize(k) for k in keywords if tokenize(k)]
    als = [tokenize(a) for a in aliases if tokenize(a)]
    return sorted(
        d.id
        for d in documents
        if als
        and all(contains_phrase(tokenize(d.text), k) for k in kws)
        and any(contains_phrase(tokenize(d.text), a) for a in als)
    )


def test_registered_under_tantivy() -> None:
    assert TOKEN_INDEXES.resolve("tantivy") is TantivyTokenIndex


def test_long_tokens_are_dropped_without_a_position_gap(tmp_path: Path) -> None:
    index = build(tmp_path / "i", [Document("long", "alpha " + "z" * 41 + " omega")])
    assert index.search(["alpha omega"], ["omega"], 5).total == 1
    assert index.search([], ["z" * 41], 5).total == 0
    ok = build(tmp_path / "j", [Document("forty", "alpha " + "z" * 40 + " omega")])
    assert ok.search([], ["z" * 40], 5).total == 1
    assert ok.search(["alpha omega"], ["omega"], 5).total == 0


@pytest.mark.parametrize("kind", ["simple", "regex"])
def test_index_finds_what_tokenize_finds_in_tricky_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    if kind != tokenization().kind:
        monkeypatch.setattr(
            "tipqa.indexes.token_index.tantivy.tokenization",
            lambda: Tokenization("regex", frozenset()),
        )
        if kind == "simple":
            pytest.skip("this tantivy build cannot use the simple tokenizer")
    docs = [Document(f"t{i}", text) for i, text in enumerate(TRICKY)]
    index = build(tmp_path / "tricky", docs)
    assert index.info()["tokenizer"] == kind
    queries = {
        " ".join(tokens[i : i + n])
        for tokens in map(tokenize, TRICKY)
        for n in (1, 2, 3)
        for i in range(len(tokens) - n + 1)
    }
    queries |= {
        "हिन्दी",
        "ΟΔΥΣΣΕΥΣ",
        "Οδυσσευς",
        "İstanbul",
        "istanbul",
        "ⓐⓑⓒ",
        "snake_case",
        "a" * 40,
        "b" * 41,
        "é" * 21,
        "ü" * 45,
        "before after",
        "after tail",
        "tail end",
        "next word",
        "don t",
        "dont",
        "straße",
        "strasse",
        "1 000 000",
        "3.14",
    }
    for query in sorted(queries):
        result = index.search([], [query], 10)
        expected = brute_force(docs, [], [query])
        assert result.total == len(expected), query
        assert sorted(h.doc_id for h in result.hits) == expected, query


def test_all_keywords_and_any_alias(corpus_index: TantivyTokenIndex) -> None:
    result = corpus_index.search(["Nobel Prize", "Marie Curie"], ["Warsaw", "Stockholm"], 10)
    assert sorted(h.doc_id for h in result.hits) == ["d01", "d04"]
    assert result.total == 2
    assert corpus_index.search(["Nobel Prize", "Marie Curie"], ["Sklodowska"], 10).total == 1
    assert corpus_index.search(["Nobel Prize", "Warsaw"], ["Stockholm"], 10).total == 0


def test_keyword_must_match_as_a_phrase(corpus_index: TantivyTokenIndex) -> None:
    result = corpus_index.search(["Nobel Prize"], ["Curie"], 10)
    assert "d03" not in {h.doc_id for h in result.hits}
    assert sorted(h.doc_id for h in result.hits) == ["d01", "d02", "d04", "d06"]
    assert corpus_index.search(["Prize Nobel"], ["Curie"], 10).total == 1


def test_alias_must_match_as_a_phrase(corpus_index: TantivyTokenIndex) -> None:
    assert corpus_index.search([], ["Curie Marie"], 10).total == 0
    assert corpus_index.search([], ["Marie Curie"], 10).total == 4


def test_no_usable_alias_means_no_match(corpus_index: TantivyTokenIndex) -> None:
    assert corpus_index.search(["Nobel Prize"], [], 10).total == 0
    assert corpus_index.search(["Nobel Prize"], ["...", " — "], 10).total == 0


def test_keywords_without_tokens_are_ignored(corpus_index: TantivyTokenIndex) -> None:
    plain = corpus_index.search([], ["Paris"], 10)
    assert plain.total == 2
    assert corpus_index.search(["!!", ""], ["Paris"], 10) == plain


def test_query_syntax_in_user_text_is_plain_text(corpus_index: TantivyTokenIndex) -> None:
    result = corpus_index.search(['"Nobel" AND (Prize', "curie:*"], ['Warsaw" OR "x'], 10)
    assert result.total == 0
    assert corpus_index.search(['"Nobel" (Prize)'], ["warsaw:"], 10).total == 1


def test_total_is_exact_beyond_k(corpus_index: TantivyTokenIndex) -> None:
    result = corpus_index.search([], ["Curie"], 2)
    assert result.total == 5
    assert len(result.hits) == 2
    assert corpus_index.search([], ["Curie"], 0) == TokenResult(total=5, hits=[])


def test_ranking_by_frequency_then_doc_id(corpus_index: TantivyTokenIndex) -> None:
    result = corpus_index.search(["Nobel Prize"], ["Curie", "Marie Curie"], 10)
    phrases = [tokenize(p) for p in ("Nobel Prize", "Curie", "Marie Curie")]
    expected = sorted(
        (-sum(count_phrase(tokenize(d.text), p) for p in phrases), d.id)
        for d in CORPUS
        if d.id in {"d01", "d02", "d04", "d06"}
    )
    assert [(h.doc_id, h.score) for h in result.hits] == [(i, -f) for f, i in expected]
    assert [h.doc_id for h in result.hits] == ["d02", "d01", "d04", "d06"]
    assert result.hits[0].score == 6.0
    assert result.hits[1].score == result.hits[2].score == result.hits[3].score == 3.0


def test_duplicate_phrases_count_once(corpus_index: TantivyTokenIndex) -> None:
    once = corpus_index.search(["Paris"], ["Paris"], 10)
    assert once == corpus_index.search(["paris", "PARIS!"], ["Paris", "paris"], 10)
    assert [h.score for h in once.hits] == [1.0, 1.0]


def test_bm25_pool_limits_ranking_not_total(tmp_path: Path) -> None:
    docs = [Document(f"p{i:02d}", "gold " * (1 + i % 7) + "filler " * i) for i in range(30)]
    exact = build(tmp_path / "exact", docs)
    pooled = index_at(tmp_path / "exact", ranking="bm25-pool", rank_pool=4)
    full = exact.search([], ["gold"], 30)
    assert full.total == 30
    assert [h.doc_id for h in full.hits][:5] == ["p06", "p13", "p20", "p27", "p05"]
    approx = pooled.search([], ["gold"], 10)
    assert approx.total == 30
    assert len(approx.hits) == 4
    truth = {h.doc_id: h.score for h in full.hits}
    assert all(truth[h.doc_id] == h.score for h in approx.hits)
    assert [h.score for h in approx.hits] == sorted((h.score for h in approx.hits), reverse=True)
    assert pooled.search([], ["gold"], 2).hits == approx.hits[:2]


def test_build_counts_duplicates_and_empty(tmp_path: Path) -> None:
    docs = [
        Document("a", "first text of a"),
        Document("b", "text of b"),
        Document("a", "second text of a"),
        Document("e1", ""),
        Document("e2", " \n\t "),
        Document("c", "text of c"),
        Document("b", "again b"),
        Document("a", "third a"),
    ]
    index = index_at(tmp_path / "i")
    counts = index.build(docs)
    assert {k: counts[k] for k in ("documents", "duplicates", "empty")} == {
        "documents": 3,
        "duplicates": 3,
        "empty": 2,
    }
    assert counts["bytes"] == len(b"first text of a" + b"text of b" + b"text of c")
    assert counts["seconds"] >= 0 and counts["workers"] == 1
    assert index.count() == 3
    assert index.get(["a"])["a"].text == "first text of a"
    assert index.search([], ["second", "third", "again"], 5).total == 0
    assert index.get(["e1", "e2"]) == {}
    assert read_json(tmp_path / "i" / MARKER)["counts"] == counts


def test_get_returns_documents_with_meta_and_skips_missing(
    corpus_index: TantivyTokenIndex,
) -> None:
    found = corpus_index.get(["d01", "d05", "nope", "d01", "x" * 70_000])
    assert sorted(found) == ["d01", "d05"]
    assert found["d01"] == CORPUS[0]
    assert found["d05"] == CORPUS[4]
    assert corpus_index.get([]) == {}


def test_get_in_batches(tmp_path: Path) -> None:
    docs = [Document(f"id-{i}", f"text number {i}") for i in range(2100)]
    index = build(tmp_path / "many", docs)
    ids = [f"id-{i}" for i in range(0, 2100, 1)] + ["id-missing"]
    random.Random(1).shuffle(ids)
    found = index.get(ids)
    assert len(found) == 2100
    assert found["id-2099"].text == "text number 2099"


def test_reopen_after_build(tmp_path: Path) -> None:
    build(tmp_path / "i", CORPUS)
    reopened = index_at(tmp_path / "i")
    assert reopened.complete()
    assert reopened.count() == len(CORPUS)
    assert reopened.search(["Nobel Prize"], ["Warsaw"], 5).hits[0].doc_id == "d01"
    assert reopened.info()["counts"]["documents"] == len(CORPUS)


def failing_stream(documents: list[Document], after: int) -> Iterator[Document]:
    """Yield `after` documents, then fail as a broken corpus file would."""
    yield from documents[:after]
    raise OSError("disk went away")


def test_interrupted_build_leaves_no_index_and_rebuild_works(tmp_path: Path) -> None:
    index = index_at(tmp_path / "i")
    with pytest.raises(OSError, match="disk went away"):
        index.build(failing_stream(CORPUS, 4))
    assert not index.complete()
    assert not (tmp_path / "i").exists()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="run build first"):
        index.count()
    index.build(CORPUS)
    assert index.complete()
    assert index.count() == len(CORPUS)


def test_interrupted_rebuild_keeps_the_old_index(tmp_path: Path) -> None:
    index = build(tmp_path / "i", CORPUS[:2])
    with pytest.raises(OSError):
        index.build(failing_stream(CORPUS, 5))
    again = index_at(tmp_path / "i")
    assert again.complete()
    assert again.count() == 2
    index.build(CORPUS)
    assert index.count() == len(CORPUS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i"]


def test_leftovers_of_a_killed_build_are_removed(tmp_path: Path) -> None:
    (tmp_path / ".i.building-abc").mkdir()
    (tmp_path / ".i.building-abc" / "meta.json").write_text("{}")
    (tmp_path / ".i.old-def").mkdir()
    build(tmp_path / "i", CORPUS[:1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i"]


def test_a_folder_without_marker_is_not_complete(tmp_path: Path) -> None:
    (tmp_path / "i").mkdir()
    index = index_at(tmp_path / "i")
    assert not index.complete()
    with pytest.raises(InputError, match="run build first"):
        index.search(["a"], ["b"], 1)


def test_marker_of_another_format_is_rejected(tmp_path: Path) -> None:
    build(tmp_path / "i", CORPUS[:1])
    marker = read_json(tmp_path / "i" / MARKER)
    write_json(tmp_path / "i" / MARKER, {**marker, "format_version": 99})
    with pytest.raises(InputError, match="rebuild the index"):
        index_at(tmp_path / "i").count()


def test_other_unicode_version_warns(tmp_path: Path) -> None:
    build(tmp_path / "i", CORPUS[:1])
    marker = read_json(tmp_path / "i" / MARKER)
    write_json(tmp_path / "i" / MARKER, {**marker, "unicode_version": "1.0"})
    with pytest.warns(UserWarning, match="Unicode 1.0"):
        assert index_at(tmp_path / "i").count() == 1


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (Document("", "text"), "id"),
        (Document("x" * 70_000, "text"), "id"),
        (Document("ok", None), "text"),  # type: ignore[arg-type]
    ],
)
def test_bad_documents_name_the_place(tmp_path: Path, document: Document, field: str) -> None:
    index = index_at(tmp_path / "i")
    with pytest.raises(InputError, match="document 2") as caught:
        index.build([CORPUS[0], document])
    assert caught.value.field == field
    assert not index.complete()


@pytest.mark.parametrize(
    "options",
    [{"threads": -1}, {"heap_mb": 10}, {"rank_pool": 0}, {"ranking": "bm25"}],
)
def test_bad_settings_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        TantivySettings(**options)  # type: ignore[arg-type]


def test_settings_parse_from_a_config_section() -> None:
    settings = parse(TantivySettings, "token_index", {"ranking": "bm25-pool", "threads": "3"})
    assert settings == TantivySettings(ranking="bm25-pool", threads=3)
    assert settings.workers() == 3
    assert set(settings.identity()) == {"ranking", "rank_pool"}
    assert settings.build_identity() == {"format_version": FORMAT_VERSION}  # search-only left out
    with pytest.raises(ConfigError, match="ranking"):
        parse(TantivySettings, "token_index", {"ranking": "approximate"})


def test_negative_k_is_a_config_error(corpus_index: TantivyTokenIndex) -> None:
    with pytest.raises(ConfigError):
        corpus_index.search([], ["Curie"], -1)


@pytest.mark.skipif(not SHARED_PASSAGES.exists(), reason="shared sample data absent")
def test_real_passages_match_brute_force(tmp_path: Path) -> None:
    rows = [orjson.loads(line) for line in SHARED_PASSAGES.read_bytes().splitlines()]
    docs = [Document(str(r["id"]), r["contents"]) for r in rows]
    index = build(tmp_path / "wiki", docs)
    assert index.count() == len(docs)
    rng = random.Random(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for doc in rng.sample(docs, 25):
            tokens = tokenize(doc.text)
            start = rng.randrange(len(tokens) - 3)
            keyword = " ".join(tokens[start : start + rng.choice((1, 2))])
            alias = " ".join(tokens[start + 2 : start + 2 + rng.choice((1, 2))])
            result = index.search([keyword], [alias, "the"], 1000)
            expected = brute_force(docs, [keyword], [alias, "the"])
            assert result.total == len(expected), (keyword, alias)
            assert sorted(h.doc_id for h in result.hits) == expected
