"""ElasticsearchTokenIndex without a server: options, input checks, and requests not sent.

The tests against a real cluster are in test_elasticsearch_contract.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tipqa.errors import ConfigError, InputError
from tipqa.records import Document
from tipqa.token_index.base import TOKEN_INDEXES, TokenResult
from tipqa.token_index.elasticsearch import ElasticsearchTokenIndex

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
