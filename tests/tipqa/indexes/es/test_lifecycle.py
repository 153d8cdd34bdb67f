"""The ledger of an Elasticsearch index built in parts, against a recording stand-in node."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.fake_elasticsearch import FakeElasticsearch

from tipqa.indexes.token_index.elasticsearch import ElasticsearchTokenIndex

pytestmark = pytest.mark.needs("elasticsearch")


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeElasticsearch, Any]]:
    """A token index at a stand-in node, created and in build mode."""
    with FakeElasticsearch() as node:
        monkeypatch.setenv("TIPQA_ES_URL", node.url)
        built = ElasticsearchTokenIndex.named("pile-tokens", progress=False)
        built.start_build()
        yield node, built


def test_a_finished_part_is_recorded_as_a_part(index: tuple) -> None:
    node, built = index
    assert not built.part_done("00.jsonl")
    built.record_part("00.jsonl", {"documents": 3})
    ledger = node.indexes[built.ledger_index]["docs"]
    assert set(ledger) == {"part:00.jsonl"}
    assert (
        ledger["part:00.jsonl"]["kind"] == "part" and ledger["part:00.jsonl"]["part"] == "00.jsonl"
    )
    assert built.part_record("00.jsonl") == {"documents": 3}


def test_a_ledger_written_with_shard_ids_is_read(index: tuple) -> None:
    node, built = index
    built.record_part("00.jsonl", {"documents": 3})
    ledger = node.indexes[built.ledger_index]["docs"]
    old = {**ledger.pop("part:00.jsonl"), "kind": "shard", "shard": "01.jsonl"}
    old.pop("part")
    ledger["shard:01.jsonl"] = old
    assert built.part_record("01.jsonl") == {"documents": 3}
    assert not built.part_done("00.jsonl")
    assert built.finalize(["01.jsonl"])["parts"] == 1


def test_the_ledger_of_a_deleted_index_marks_nothing_done(index: tuple) -> None:
    node, built = index
    built.record_part("00.jsonl", {"documents": 3})
    ledger = node.indexes[built.ledger_index]["docs"]
    ledger["shard:01.jsonl"] = {**ledger["part:00.jsonl"], "index_uuid": "another index's"}
    assert built.part_done("00.jsonl") and not built.part_done("01.jsonl")
