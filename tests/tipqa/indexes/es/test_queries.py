"""Request bodies and response parsing of the Elasticsearch backends, without a server."""

from __future__ import annotations

import numpy as np
import pytest

from tipqa.core.records import Chunk, Document, TokenHit, VectorHit
from tipqa.indexes.es import queries


def test_phrases_tokenize_and_drop_empty() -> None:
    assert queries.phrases(["Eiffel Tower", "!!!", "", "Paris's"]) == [
        ["eiffel", "tower"],
        ["paris", "s"],
    ]


def test_token_search_body_is_exact() -> None:
    keywords = queries.phrases(["Eiffel Tower", "built"])
    aliases = queries.phrases(["1889", "Eighteen eighty-nine"])
    body = queries.token_search_body(keywords, aliases, size=100)
    assert body == {
        "query": {
            "bool": {
                "must": [
                    {"match_phrase": {"text": {"query": "eiffel tower"}}},
                    {"match_phrase": {"text": {"query": "built"}}},
                    {
                        "bool": {
                            "should": [
                                {"match_phrase": {"text": {"query": "1889"}}},
                                {"match_phrase": {"text": {"query": "eighteen eighty nine"}}},
                            ],
                            "minimum_should_match": 1,
                        }
                    },
                ]
            }
        },
        "size": 100,
        "track_total_hits": True,
        "sort": [{"_score": {"order": "desc"}}, {"doc_id": {"order": "asc"}}],
        "_source": False,
    }


def test_token_search_body_pages_and_alias_only() -> None:
    body = queries.token_search_body([], [["paris"]], size=5, search_after=[3.0, "d7"])
    assert body["search_after"] == [3.0, "d7"]
    assert body["query"] == {
        "bool": {
            "must": [
                {
                    "bool": {
                        "should": [{"match_phrase": {"text": {"query": "paris"}}}],
                        "minimum_should_match": 1,
                    }
                }
            ]
        }
    }
    with pytest.raises(ValueError):
        queries.token_query([["a"]], [])


def test_duplicate_phrases_are_one_clause() -> None:
    query = queries.token_query([["paris"], ["paris"], ["france"]], [["lyon"], ["lyon"]])
    assert query == {
        "bool": {
            "must": [
                {"match_phrase": {"text": {"query": "paris"}}},
                {"match_phrase": {"text": {"query": "france"}}},
                {
                    "bool": {
                        "should": [{"match_phrase": {"text": {"query": "lyon"}}}],
                        "minimum_should_match": 1,
                    }
                },
            ]
        }
    }


def test_an_alias_that_is_a_keyword_makes_the_other_aliases_optional() -> None:
    query = queries.token_query([["paris"]], [["paris"], ["city", "of", "light"]])
    assert query == {
        "bool": {
            "must": [{"match_phrase": {"text": {"query": "paris"}}}],
            "should": [{"match_phrase": {"text": {"query": "city of light"}}}],
            "minimum_should_match": 0,
        }
    }
    assert queries.token_query([["paris"]], [["paris"]]) == {
        "bool": {"must": [{"match_phrase": {"text": {"query": "paris"}}}]}
    }


def _search_response(hits: list[tuple[str, float]], total: int, relation: str = "eq") -> dict:
    return {
        "took": 3,
        "timed_out": False,
        "hits": {
            "total": {"value": total, "relation": relation},
            "max_score": None,
            "hits": [{"_index": "t", "_id": i, "_score": None, "sort": [s, i]} for i, s in hits],
        },
    }


def test_parse_token_response() -> None:
    total, hits, last = queries.parse_token_response(
        _search_response([("d2", 5.0), ("d1", 2.0), ("d3", 2.0)], total=250)
    )
    assert total == 250
    assert hits == [TokenHit("d2", 5.0), TokenHit("d1", 2.0), TokenHit("d3", 2.0)]
    assert last == [2.0, "d3"]
    assert queries.parse_token_response(_search_response([], total=0)) == (0, [], None)


def test_parse_token_response_rejects_inexact_totals_and_bad_shapes() -> None:
    with pytest.raises(queries.ResponseError, match="lower bound"):
        queries.parse_token_response(_search_response([("d1", 1.0)], 10000, "gte"))
    with pytest.raises(queries.ResponseError):
        queries.parse_token_response({"error": {"type": "search_phase_execution_exception"}})
    with pytest.raises(queries.ResponseError):
        queries.parse_token_response({"hits": {"total": {"value": 1}, "hits": [{"_id": "x"}]}})


def test_document_action() -> None:
    doc = Document(id="pile-3-17", text="Some text.", meta={"pile_set_name": "Wikipedia"})
    assert queries.document_action("pile", doc) == {
        "_op_type": "create",
        "_index": "pile",
        "_id": "pile-3-17",
        "_source": {
            "doc_id": "pile-3-17",
            "text": "Some text.",
            "meta": {"pile_set_name": "Wikipedia"},
        },
    }


def test_parse_mget() -> None:
    response = {
        "docs": [
            {"_index": "t", "_id": "a", "found": True, "_source": {"text": "A.", "meta": {}}},
            {"_index": "t", "_id": "b", "found": False},
            {"_index": "t", "_id": "c", "found": True, "_source": {"text": "C."}},
        ]
    }
    assert queries.parse_mget(response) == {
        "a": Document("a", "A.", {}),
        "c": Document("c", "C.", {}),
    }
    assert queries.parse_found_ids(response) == {"a", "c"}
    with pytest.raises(queries.ResponseError, match="'z'"):
        queries.parse_mget({"docs": [{"_id": "z", "error": {"type": "shard_not_found"}}]})


def test_chunk_action_and_knn_body() -> None:
    vector = np.array([0.5, -0.25, 0.125], dtype=np.float32)
    action = queries.chunk_action("vec", Chunk("d1#0", "d1", 0, "chunk text"), vector)
    source = action.pop("_source")
    assert action == {"_op_type": "create", "_index": "vec", "_id": "d1#0"}
    assert source.pop("vector").tolist() == [0.5, -0.25, 0.125]
    assert source == {"doc_id": "d1", "chunk_index": 0, "text": "chunk text"}
    assert queries.knn_search_body(vector, 10, 100) == {
        "knn": {
            "field": "vector",
            "query_vector": [0.5, -0.25, 0.125],
            "k": 10,
            "num_candidates": 100,
        },
        "size": 10,
        "_source": ["doc_id", "text"],
    }
    assert queries.knn_search_body(vector, 50, 10)["knn"]["num_candidates"] == 50
    assert queries.knn_search_body(vector, 10, 50_000)["knn"]["num_candidates"] == 10_000
    with pytest.raises(ValueError):
        queries.knn_search_body(vector, 0, 10)


def test_msearch_lines() -> None:
    assert queries.msearch_lines([{"a": 1}, {"b": 2}]) == [{}, {"a": 1}, {}, {"b": 2}]


@pytest.mark.parametrize("similarity", ["cosine", "dot_product", "max_inner_product"])
def test_similarity_from_score_inverts_elasticsearch(similarity: str) -> None:
    for raw in (-0.9, -0.2, 0.0, 0.3, 0.99):
        if similarity == "max_inner_product":
            score = 1 / (1 - raw) if raw < 0 else raw + 1
        else:
            score = (1 + raw) / 2
        assert queries.similarity_from_score(score, similarity) == pytest.approx(raw)
    assert queries.similarity_from_score(0.25, "l2_norm") == 0.25
    with pytest.raises(ValueError):
        queries.similarity_from_score(0.5, "hamming")


def test_parse_knn_responses() -> None:
    response = {
        "took": 1,
        "responses": [
            {
                "hits": {
                    "total": {"value": 2, "relation": "eq"},
                    "hits": [
                        {"_id": "c1", "_score": 0.95, "_source": {"doc_id": "d1", "text": "x"}},
                        {"_id": "c2", "_score": 0.75, "_source": {"doc_id": "d2", "text": "y"}},
                    ],
                },
                "status": 200,
            },
            {"hits": {"total": {"value": 0, "relation": "eq"}, "hits": []}, "status": 200},
        ],
    }
    results = queries.parse_knn_responses(response, "cosine")
    assert results[1] == []
    assert [h.chunk_id for h in results[0]] == ["c1", "c2"]
    assert results[0][0] == VectorHit("c1", "d1", pytest.approx(0.9), "x")
    failing = {"responses": [{"error": {"type": "index_not_found_exception"}, "status": 404}]}
    with pytest.raises(queries.ResponseError, match="index_not_found"):
        queries.parse_knn_responses(failing, "cosine")
