"""Questions found verbatim: counted with the token index's phrase search (tantivy, and the
requests Elasticsearch receives)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from support.fake_elasticsearch import FakeElasticsearch

from tipqa.audit.verbatim import count_verbatim
from tipqa.core.records import Document, Question, Verbatim
from tipqa.core.stats import StepStats
from tipqa.indexes.token_index.tantivy import TantivyTokenIndex

QUESTIONS = [
    Question("quiz", "Who painted 'The Grey Mill'?", "Ena Voss", ["Ena Voss", "Voss"]),
    Question("plain", "Which river runs past Tolm?", "Arnet", ["Arnet"]),
    Question("nowhere", "What is the capital of Quarn?", "Sel", ["Sel"]),
]
DOCUMENTS = [
    Document("a", "QUIZ: who painted THE grey mill? Answer: Ena Voss."),
    Document("b", "Who painted\n\nthe Grey Mill... nobody knows."),
    Document("c", "Which river runs past Tolm? The guide does not say."),
    Document("d", "Who painted the Grey, Mill? Voss did."),
    Document("e", "Who painted the Grey Millstone?"),
]


def test_a_question_is_in_a_document_whatever_its_case_and_punctuation(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    index = TantivyTokenIndex.at(tmp_path_factory.mktemp("index"), threads=1)
    index.build(DOCUMENTS)
    stats = StepStats("verbatim")
    found = count_verbatim(QUESTIONS, index, stats)
    assert found == [Verbatim("quiz", 3, 2), Verbatim("plain", 1, 0), Verbatim("nowhere", 0, 0)]
    assert stats.counts["questions_in_a_document"] == 2
    assert stats.counts["questions_with_an_alias_in_a_document"] == 1


class CountingNode(FakeElasticsearch):
    """The recording node, also answering `_search` with the next of `totals` (no hits)."""

    def __init__(self, totals: list[int]) -> None:
        super().__init__()
        self.totals = iter(totals)
        self.searches: list[dict[str, Any]] = []

    def handle(self, method: str, target: str, raw: bytes) -> tuple[int, Any]:
        """Record a search and answer its total; pass any other request on."""
        if not unquote(urlsplit(target).path).endswith("/_search"):
            return super().handle(method, target, raw)
        with self._lock:
            self.searches.append(json.loads(raw))
            total = next(self.totals)
        return 200, {"hits": {"total": {"value": total, "relation": "eq"}, "hits": []}}


@pytest.fixture
def node(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingNode]:
    """A node answering the verbatim counts 4 and 1 (the first question), then 0."""
    with CountingNode([4, 1, 0]) as running:
        monkeypatch.setenv("TIPQA_ES_URL", running.url)
        yield running


def phrase(text: str) -> dict[str, Any]:
    return {"match_phrase": {"text": {"query": text}}}


@pytest.mark.needs("elasticsearch")
def test_elasticsearch_is_asked_for_exact_counts_of_the_phrases(node: CountingNode) -> None:
    from tipqa.indexes.token_index.elasticsearch import ElasticsearchTokenIndex

    index = ElasticsearchTokenIndex.named("pile-tokens", progress=False)
    found = count_verbatim(QUESTIONS[:1] + QUESTIONS[2:], index, StepStats("verbatim"))
    assert found == [Verbatim("quiz", 4, 1), Verbatim("nowhere", 0, 0)]
    question = "who painted the grey mill"
    alone, with_alias, other = node.searches
    assert all(s["size"] == 0 and s["track_total_hits"] is True for s in node.searches)
    assert alone["query"] == {
        "bool": {"must": [{"bool": {"should": [phrase(question)], "minimum_should_match": 1}}]}
    }
    aliases = [phrase("ena voss"), phrase("voss")]
    assert with_alias["query"] == {
        "bool": {
            "must": [phrase(question), {"bool": {"should": aliases, "minimum_should_match": 1}}]
        }
    }
    assert other["query"]["bool"]["must"][0]["bool"]["should"] == [
        phrase("what is the capital of quarn")
    ]
