"""ElasticsearchTokenIndex without a cluster: options, input checks, requests not sent, and
the BM25 requests as a recording stand-in of a node receives them.

The tests against a real cluster are in test_elasticsearch_contract.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from support.fake_elasticsearch import FakeElasticsearch

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Document
from tipqa.indexes.es import mappings
from tipqa.indexes.es.queries import ResponseError
from tipqa.indexes.token_index import elasticsearch as es_module
from tipqa.indexes.token_index.base import TOKEN_INDEXES, RanksText, TokenResult
from tipqa.indexes.token_index.elasticsearch import (
    ElasticsearchTokenIndex,
    ElasticsearchTokenSettings,
)

pytestmark = pytest.mark.needs("elasticsearch")


class NoServer:
    """A client stand-in that fails the test on any use: nothing may be sent."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"unexpected use of the Elasticsearch client: {name}")


def index(**options: Any) -> ElasticsearchTokenIndex:
    """An index object bound to no server."""
    return ElasticsearchTokenIndex.named(
        "pile-tokens", client=NoServer(), progress=False, **options
    )


def test_registered_under_elasticsearch() -> None:
    assert TOKEN_INDEXES.resolve("elasticsearch") is ElasticsearchTokenIndex


@pytest.mark.parametrize(
    "options",
    [
        {"shards": 0},
        {"threads": 0},
        {"bulk_chunk_docs": 0},
        {"max_doc_bytes": 0},
        {"replicas": -1},
        {"force_merge_segments": 0},
    ],
)
def test_bad_options_are_config_errors(options: dict) -> None:
    with pytest.raises(ConfigError):
        index(**options)


@pytest.mark.parametrize("name", ["Pile", "_pile", "-pile", ""])
def test_bad_index_names_are_config_errors(name: str) -> None:
    with pytest.raises(ConfigError, match="index name"):
        ElasticsearchTokenIndex.named(name, client=NoServer())


def test_url_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIPQA_ES_URL", raising=False)
    with pytest.raises(ConfigError, match="TIPQA_ES_URL"):
        ElasticsearchTokenIndex.named("pile")
    monkeypatch.setenv("TIPQA_ES_URL", "http://127.0.0.1:9200")
    assert ElasticsearchTokenIndex.named("pile").client is not None


def test_search_without_a_usable_alias_sends_nothing() -> None:
    assert index().search(["Eiffel Tower"], ["!!!", ""], 10) == TokenResult(total=0, hits=[])
    assert index().search(["Eiffel Tower"], [], 10) == TokenResult(total=0, hits=[])
    with pytest.raises(ConfigError):
        index().search(["a"], ["b"], -1)


def test_documents_are_checked_before_sending() -> None:
    docs = [
        Document("a", "Plain text."),
        Document("b", "   \n\t "),
        Document("c", "x" * 101),
        Document("d", "lone \ud800 surrogate"),
        Document("e", "fine", meta={"bad": {1, 2}}),
        Document("f", "\u00e9" * 50),
    ]
    skipped = dict.fromkeys(("empty", "too_large", "unencodable", "bytes"), 0.0)
    actions = list(index(max_doc_bytes=100)._actions(docs, skipped))
    assert [a["_id"] for a in actions] == ["a", "f"]
    assert actions[0] == {
        "_op_type": "create",
        "_index": "pile-tokens",
        "_id": "a",
        "_source": {"doc_id": "a", "text": "Plain text.", "meta": {}},
    }
    assert skipped == {"empty": 1, "too_large": 1, "unencodable": 2, "bytes": 11 + 100}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (Document("", "text"), "id must be"),
        (Document("x" * 513, "text"), "512 bytes"),
        (Document("ok", None), "text must be a string"),  # type: ignore[arg-type]
    ],
)
def test_bad_ids_and_texts_raise_naming_the_document(document: Document, message: str) -> None:
    with pytest.raises(InputError, match=message) as error:
        list(index()._actions([Document("first", "ok"), document], {"bytes": 0}))
    assert "document 2" in str(error.value)


class SearchingNode(FakeElasticsearch):
    """The recording node, also answering `_msearch`: search i gets the hits `answers[i]`."""

    def __init__(self, answers: list[list[str]]) -> None:
        super().__init__()
        self.answers = iter(answers)

    def handle(self, method: str, target: str, raw: bytes) -> tuple[int, Any]:
        """Record an `_msearch` (its target with the query string, its NDJSON lines) and
        answer it; pass any other request on."""
        if not unquote(urlsplit(target).path).endswith("/_msearch"):
            return super().handle(method, target, raw)
        lines = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        with self._lock:
            self.requests.append((method, target, lines))
            hits = [next(self.answers) for _ in lines[1::2]]
        responses = [
            {"hits": {"hits": [{"_id": i, "_score": None, "sort": [1.0, i]} for i in ids]}}
            for ids in hits
        ]
        return 200, {"responses": responses}


@pytest.fixture
def node(monkeypatch: pytest.MonkeyPatch) -> Iterator[SearchingNode]:
    """A node whose three BM25 searches are answered with these hits, at TIPQA_ES_URL."""
    with SearchingNode([["d2", "d1"], [], ["d9"]]) as running:
        monkeypatch.setenv("TIPQA_ES_URL", running.url)
        yield running


def bm25_body(query: str) -> dict[str, Any]:
    """The search of one text, with n = 3."""
    return {
        "query": {"match": {"text.bm25": {"query": query}}},
        "size": 3,
        "sort": [{"_score": {"order": "desc"}}, {"doc_id": {"order": "asc"}}],
        "track_total_hits": False,
        "_source": False,
    }


def test_rank_texts_sends_one_msearch_per_batch(
    node: SearchingNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(es_module, "RANK_BATCH", 2)
    index = ElasticsearchTokenIndex.named("pile-tokens", progress=False, bm25=True)
    assert isinstance(index, RanksText)
    index._ensure_index()
    created = next(body for method, _, body in node.requests if method == "PUT")
    assert created["mappings"]["properties"]["text"]["fields"] == {
        "bm25": {
            "type": "text",
            "analyzer": mappings.ANALYZER,
            "index_options": "freqs",
            "similarity": "BM25",
        }
    }
    texts = ["Marie CURIE, marie!", "?!", "Nobel prize", "Paris"]
    assert index.rank_texts(texts, 3) == [["d2", "d1"], [], [], ["d9"]]
    searches = [(target, lines) for _, target, lines in node.requests if "_msearch" in target]
    assert [urlsplit(target).query for target, _ in searches] == [
        "search_type=dfs_query_then_fetch"
    ] * 2
    assert [lines for _, lines in searches] == [
        [{}, bm25_body("marie curie"), {}, bm25_body("nobel prize")],
        [{}, bm25_body("paris")],
    ]


def test_the_bm25_field_is_only_mapped_when_asked_for(node: SearchingNode) -> None:
    index = ElasticsearchTokenIndex.named("plain-tokens", progress=False)
    index._ensure_index()
    created = next(body for method, _, body in node.requests if method == "PUT")
    assert created["mappings"]["properties"] == mappings.token_index_mappings()["properties"]
    plain, bm25 = ElasticsearchTokenSettings(), ElasticsearchTokenSettings(bm25=True)
    assert plain.identity() != bm25.identity()


def test_rank_texts_refuses_an_index_without_the_bm25_field(node: SearchingNode) -> None:
    index = ElasticsearchTokenIndex.named("old-tokens", progress=False)
    index.client.indices.create(index="old-tokens", mappings=mappings.token_index_mappings())
    with pytest.raises(ConfigError, match=r"no text\.bm25 field.*bm25 = true"):
        index.rank_texts(["Paris"], 3)
    assert not any("_msearch" in target for _, target, _ in node.requests)


def test_rank_texts_checks_n_and_sends_nothing_without_tokens() -> None:
    assert index().rank_texts(["!!!", ""], 5) == [[], []]
    for n in (0, 10_001):
        with pytest.raises(ConfigError, match="n must be"):
            index().rank_texts(["Paris"], n)


@pytest.mark.parametrize(
    "response",
    [
        {"responses": [{"error": {"type": "search_phase_execution_exception"}}]},
        {},
        {"responses": []},
    ],
)
def test_bad_msearch_responses_are_response_errors(response: dict) -> None:
    with pytest.raises(ResponseError):
        es_module.parse_ranked_ids(response, 1)
