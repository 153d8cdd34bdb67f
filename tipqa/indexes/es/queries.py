"""Request bodies and response parsing for the Elasticsearch indexes (pure functions).

Phrases arrive here already tokenized with `tipqa.core.text.tokenize`: a phrase is sent as its
tokens joined by spaces, which the index's analyzer turns back into the same tokens, so the
query means exactly what `tipqa.core.text` says it means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tipqa.core.errors import TipqaError
from tipqa.core.records import Chunk, Document, TokenHit, VectorHit
from tipqa.core.text import tokenize

TEXT_FIELD = "text"
VECTOR_FIELD = "vector"
MAX_RESULT_WINDOW = 10_000
MAX_NUM_CANDIDATES = 10_000

Phrase = Sequence[str]


class ResponseError(TipqaError):
    """Elasticsearch answered with an error or with a shape this code does not expect."""


def phrases(texts: Sequence[str]) -> list[list[str]]:
    """The tokens of each text, dropping texts without any token (they cannot be matched)."""
    return [tokens for tokens in (tokenize(text) for text in texts) if tokens]


def phrase_clause(tokens: Phrase) -> dict[str, Any]:
    """A `match_phrase` clause on the text field for one tokenized phrase."""
    return {"match_phrase": {TEXT_FIELD: {"query": " ".join(tokens)}}}


def token_query(keywords: Sequence[Phrase], aliases: Sequence[Phrase]) -> dict[str, Any]:
    """Documents with every keyword phrase and at least one alias phrase.

    Each distinct phrase is one clause, and every clause scores its phrase frequency (see
    `tipqa.indexes.es.mappings`), so the bool query scores the number of occurrences of the distinct
    keyword and alias phrases, as the tantivy backend counts them. An alias that is also a
    keyword makes the alias condition always true: the other aliases then only add to the
    score (`minimum_should_match` 0).
    """
    keyword_set = list(dict.fromkeys(tuple(k) for k in keywords))
    alias_set = list(dict.fromkeys(tuple(a) for a in aliases))
    if not alias_set:
        raise ValueError("a token query needs at least one alias phrase")
    must = [phrase_clause(k) for k in keyword_set]
    if any(alias in keyword_set for alias in alias_set):
        others = [phrase_clause(a) for a in alias_set if a not in keyword_set]
        query: dict[str, Any] = {"must": must}
        if others:
            query.update({"should": others, "minimum_should_match": 0})
        return {"bool": query}
    any_alias = {
        "bool": {
            "should": [phrase_clause(alias) for alias in alias_set],
            "minimum_should_match": 1,
        }
    }
    return {"bool": {"must": [*must, any_alias]}}


def token_search_body(
    keywords: Sequence[Phrase],
    aliases: Sequence[Phrase],
    size: int,
    search_after: list[Any] | None = None,
) -> dict[str, Any]:
    """The search body: exact total, frequency descending, then `doc_id` ascending."""
    body: dict[str, Any] = {
        "query": token_query(keywords, aliases),
        "size": size,
        "track_total_hits": True,
        "sort": [{"_score": {"order": "desc"}}, {"doc_id": {"order": "asc"}}],
        "_source": False,
    }
    if search_after is not None:
        body["search_after"] = search_after
    return body


def parse_token_response(response: dict[str, Any]) -> tuple[int, list[TokenHit], list[Any] | None]:
    """Total, hits (doc id, frequency) and the sort values of the last hit, from a search."""
    try:
        total = response["hits"]["total"]
        hits = response["hits"]["hits"]
        if total.get("relation", "eq") != "eq":
            raise ResponseError(f"the total is a lower bound ({total}), expected an exact count")
        parsed = [TokenHit(doc_id=str(h["_id"]), score=float(h["sort"][0])) for h in hits]
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        raise ResponseError(f"unexpected search response: {exc!r}") from exc
    last = list(hits[-1]["sort"]) if hits else None
    return int(total["value"]), parsed, last


def document_source(document: Document) -> dict[str, Any]:
    """The stored form of a corpus document in the token index."""
    return {"doc_id": document.id, "text": document.text, "meta": document.meta}


def document_action(index: str, document: Document) -> dict[str, Any]:
    """A bulk `create` action: `_id` is the document id, so a rerun never duplicates it."""
    return {
        "_op_type": "create",
        "_index": index,
        "_id": document.id,
        "_source": document_source(document),
    }


def parse_mget(response: dict[str, Any]) -> dict[str, Document]:
    """The found documents of an mget response, by id."""
    found: dict[str, Document] = {}
    try:
        for entry in response["docs"]:
            if "error" in entry:
                raise ResponseError(f"mget of {entry.get('_id')!r} failed: {entry['error']}")
            if entry.get("found"):
                source = entry["_source"]
                found[str(entry["_id"])] = Document(
                    id=str(entry["_id"]), text=source["text"], meta=source.get("meta") or {}
                )
    except (KeyError, TypeError) as exc:
        raise ResponseError(f"unexpected mget response: {exc!r}") from exc
    return found


def parse_found_ids(response: dict[str, Any]) -> set[str]:
    """The ids that an mget without sources found."""
    try:
        return {str(e["_id"]) for e in response["docs"] if e.get("found")}
    except (KeyError, TypeError) as exc:
        raise ResponseError(f"unexpected mget response: {exc!r}") from exc


def chunk_action(index: str, chunk: Chunk, vector: np.ndarray) -> dict[str, Any]:
    """A bulk `create` action for one chunk: `_id` is the chunk id."""
    return {
        "_op_type": "create",
        "_index": index,
        "_id": chunk.id,
        "_source": {
            "doc_id": chunk.doc_id,
            "chunk_index": chunk.index,
            "text": chunk.text,
            VECTOR_FIELD: vector,
        },
    }


def knn_search_body(vector: np.ndarray, k: int, num_candidates: int) -> dict[str, Any]:
    """An approximate kNN search for the k nearest chunks of one query vector."""
    if not 1 <= k <= MAX_NUM_CANDIDATES:
        raise ValueError(f"k must be between 1 and {MAX_NUM_CANDIDATES}, got {k}")
    return {
        "knn": {
            "field": VECTOR_FIELD,
            "query_vector": [float(x) for x in vector],
            "k": k,
            "num_candidates": min(max(num_candidates, k), MAX_NUM_CANDIDATES),
        },
        "size": k,
        "_source": ["doc_id", "text"],
    }


def msearch_lines(bodies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The header/body pairs of an msearch request (the index is given to the call)."""
    lines: list[dict[str, Any]] = []
    for body in bodies:
        lines.extend(({}, body))
    return lines


def similarity_from_score(score: float, similarity: str) -> float:
    """Undo Elasticsearch's mapping of a similarity to a positive score.

    cosine and dot_product: (1 + s) / 2, returned as s (the cosine for unit vectors, as FAISS
    reports it); l2_norm: 1 / (1 + d^2), returned as is (FAISS's index reports the same);
    max_inner_product: 1 / (1 - s) below zero and s + 1 above, returned as s.
    """
    if similarity in ("cosine", "dot_product"):
        return 2.0 * score - 1.0
    if similarity == "l2_norm":
        return score
    if similarity == "max_inner_product":
        return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score
    raise ValueError(f"unknown similarity {similarity!r}")


def parse_knn_responses(response: dict[str, Any], similarity: str) -> list[list[VectorHit]]:
    """The hits of each search of an msearch response, nearest first."""
    results: list[list[VectorHit]] = []
    try:
        for number, item in enumerate(response["responses"]):
            if "error" in item:
                raise ResponseError(f"kNN search {number} failed: {item['error']}")
            results.append(
                [
                    VectorHit(
                        chunk_id=str(hit["_id"]),
                        doc_id=str(hit["_source"]["doc_id"]),
                        score=similarity_from_score(float(hit["_score"]), similarity),
                        text=str(hit["_source"]["text"]),
                    )
                    for hit in item["hits"]["hits"]
                ]
            )
    except (KeyError, TypeError) as exc:
        raise ResponseError(f"unexpected msearch response: {exc!r}") from exc
    return results
