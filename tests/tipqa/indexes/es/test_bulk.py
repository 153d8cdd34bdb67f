"""Parallel bulk indexing through the real `elasticsearch` client against a local HTTP server.

The server is not Elasticsearch: it only answers `_bulk` requests the way a test scripts them
(in the documented response shape) and records what the client sent, so that the client's
and our retry, error and threading paths run for real.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import pytest

from tipqa.core.errors import ConfigError, InputError, MissingExtraError
from tipqa.indexes.es.bulk import BulkFailure, run_bulk
from tipqa.indexes.es.client import EsConnection, make_client

pytestmark = pytest.mark.needs("elasticsearch")

Answer = Callable[[int, list[tuple[dict, dict]]], tuple[int, dict]]


def item(op: str, doc_id: str, status: int, error: str | None = None) -> dict:
    """One bulk response item in Elasticsearch's documented shape."""
    body: dict[str, Any] = {"_index": "idx", "_id": doc_id, "status": status}
    if error is None:
        body.update({"_version": 1, "result": "created", "_seq_no": 0, "_primary_term": 1})
    else:
        body["error"] = {"type": error, "reason": f"{error} for {doc_id}"}
    return {op: body}


def bulk_response(items: list[dict]) -> dict:
    """A whole bulk response around `items`."""
    errors = any("error" in next(iter(i.values())) for i in items)
    return {"took": 2, "errors": errors, "items": items}


class BulkServer:
    """A local HTTP server that answers `_bulk` as scripted and records each request."""

    def __init__(self, answer: Answer, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_PUT(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, body = server.handle(self.path, headers, raw)
                payload = orjson.dumps(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Elastic-Product", "Elasticsearch")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def handle(self, path: str, headers: dict, raw: bytes) -> tuple[int, dict]:
        """Record a request and return the scripted answer."""
        if not path.startswith("/_bulk"):
            return 404, {"error": {"type": "not_supported_here"}, "status": 404}
        lines = [orjson.loads(line) for line in raw.splitlines() if line.strip()]
        pairs = list(zip(lines[::2], lines[1::2], strict=True))
        with self.lock:
            number = len(self.requests)
            self.requests.append({"headers": headers, "pairs": pairs})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delay)
            return self.answer(number, pairs)
        finally:
            with self.lock:
                self.in_flight -= 1

    def ids(self, number: int) -> list[str]:
        """The document ids of request `number`."""
        return [next(iter(action.values()))["_id"] for action, _ in self.requests[number]["pairs"]]

    def __enter__(self) -> BulkServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def actions(n: int, index: str = "idx") -> list[dict]:
    """`n` create actions with ids d0, d1, ..."""
    return [
        {"_op_type": "create", "_index": index, "_id": f"d{i}", "_source": {"text": f"t{i}"}}
        for i in range(n)
    ]


@pytest.fixture
def client_for(monkeypatch: pytest.MonkeyPatch) -> Callable[[BulkServer], Any]:
    """A real client pointed at the server through TIPQA_ES_URL, with an API key."""
    monkeypatch.setenv("TIPQA_TEST_ES_KEY", "secret-key")

    def make(server: BulkServer) -> Any:
        monkeypatch.setenv("TIPQA_ES_URL", server.url)
        connection = EsConnection(
            api_key_env="TIPQA_TEST_ES_KEY", request_timeout=10.0, max_retries=1
        )
        return make_client(connection)

    return make


def test_rejected_item_is_retried_until_indexed(client_for: Callable) -> None:
    def answer(number: int, pairs: list) -> tuple[int, dict]:
        ids = [next(iter(a.values()))["_id"] for a, _ in pairs]
        return 200, bulk_response(
            [
                item("create", i, 429, "es_rejected_execution_exception")
                if number == 0 and i == "d2"
                else item("create", i, 201)
                for i in ids
            ]
        )

    with BulkServer(answer) as server:
        report = run_bulk(
            client_for(server), actions(5), threads=1, chunk_docs=10, initial_backoff=0.01
        )
    assert report.created == 5 and report.transient == {} and report.rejected == {}
    assert len(server.requests) == 2
    assert server.ids(0) == ["d0", "d1", "d2", "d3", "d4"]
    assert server.ids(1) == ["d2"]
    first_action, first_source = server.requests[0]["pairs"][0]
    assert first_action == {"create": {"_index": "idx", "_id": "d0"}}
    assert first_source == {"text": "t0"}
    assert server.requests[0]["headers"]["authorization"] == "ApiKey secret-key"
    report.raise_for_transient("test")


def test_persistent_rejection_is_reported_not_swallowed(client_for: Callable) -> None:
    def answer(number: int, pairs: list) -> tuple[int, dict]:
        ids = [next(iter(a.values()))["_id"] for a, _ in pairs]
        return 200, bulk_response(
            [
                item("create", i, 429, "es_rejected_execution_exception")
                if i == "d1"
                else item("create", i, 201)
                for i in ids
            ]
        )

    with BulkServer(answer) as server:
        report = run_bulk(
            client_for(server), actions(3), threads=1, max_retries=2, initial_backoff=0.01
        )
    assert [server.ids(n) for n in range(len(server.requests))] == [
        ["d0", "d1", "d2"],
        ["d1"],
        ["d1"],
    ]
    assert report.created == 2
    assert report.transient == {"es_rejected_execution_exception": 1}
    with pytest.raises(BulkFailure, match="1 documents were not indexed"):
        report.raise_for_transient("index 'idx'")


def test_permanent_errors_and_conflicts_are_counted_without_retry(client_for: Callable) -> None:
    def answer(number: int, pairs: list) -> tuple[int, dict]:
        errors = {"d1": (400, "mapper_parsing_exception"), "d2": (409, "version_conflict")}
        ids = [next(iter(a.values()))["_id"] for a, _ in pairs]
        return 200, bulk_response([item("create", i, *errors.get(i, (201, None))) for i in ids])

    with BulkServer(answer) as server:
        report = run_bulk(client_for(server), actions(5), threads=1, initial_backoff=0.01)
    assert len(server.requests) == 1
    assert report.created == 3
    assert report.conflicts == 1
    assert report.rejected == {"mapper_parsing_exception": 1}
    assert report.done == 4
    assert len(report.examples) == 1 and "'d1'" in report.examples[0]
    report.raise_for_transient("test")


def test_parallel_workers_send_every_action_once_in_bounded_chunks(
    client_for: Callable,
) -> None:
    def answer(number: int, pairs: list) -> tuple[int, dict]:
        return 200, bulk_response(
            [item("create", next(iter(a.values()))["_id"], 201) for a, _ in pairs]
        )

    with BulkServer(answer, delay=0.05) as server:
        report = run_bulk(client_for(server), actions(103), threads=3, chunk_docs=10)
    sent = [i for n in range(len(server.requests)) for i in server.ids(n)]
    assert sorted(sent) == sorted(f"d{i}" for i in range(103))
    assert all(len(server.ids(n)) <= 10 for n in range(len(server.requests)))
    assert 2 <= server.max_in_flight <= 3
    assert report.created == 103


def test_one_id_is_sent_by_one_worker_in_input_order(client_for: Callable) -> None:
    """With create actions the first text of an id wins even with parallel workers."""
    stored: dict[str, str] = {}

    def answer(number: int, pairs: list) -> tuple[int, dict]:
        items = []
        for action, source in pairs:
            doc_id = action["create"]["_id"]
            if source["text"] == "first dup":
                time.sleep(0.3)
            if doc_id in stored:
                items.append(item("create", doc_id, 409, "version_conflict_engine_exception"))
            else:
                stored[doc_id] = source["text"]
                items.append(item("create", doc_id, 201))
        return 200, bulk_response(items)

    def dup(text: str) -> dict:
        return {"_op_type": "create", "_index": "idx", "_id": "dup", "_source": {"text": text}}

    stream = [dup("first dup"), *actions(2), dup("last")]
    with BulkServer(answer) as server:
        report = run_bulk(client_for(server), stream, threads=4, chunk_docs=1)
    assert stored["dup"] == "first dup"
    assert report.created == 3 and report.conflicts == 1


def test_a_failing_request_stops_every_worker(client_for: Callable) -> None:
    consumed = 0

    def counted() -> Iterator[dict]:
        nonlocal consumed
        for action in actions(2000):
            consumed += 1
            yield action

    def answer(number: int, pairs: list) -> tuple[int, dict]:
        return 500, {"error": {"type": "illegal_state_exception", "reason": "boom"}, "status": 500}

    import elasticsearch as es

    with BulkServer(answer) as server, pytest.raises(es.ApiError):
        run_bulk(client_for(server), counted(), threads=2, chunk_docs=10)
    assert len(server.requests) <= 4
    assert consumed < 100


def test_an_error_in_the_input_stream_reaches_the_caller(client_for: Callable) -> None:
    def broken() -> Iterator[dict]:
        yield from actions(3)
        raise InputError("invalid JSON", path="corpus.jsonl", line=4)

    def answer(number: int, pairs: list) -> tuple[int, dict]:
        return 200, bulk_response(
            [item("create", next(iter(a.values()))["_id"], 201) for a, _ in pairs]
        )

    with BulkServer(answer) as server, pytest.raises(InputError, match=r"corpus\.jsonl, line 4"):
        run_bulk(client_for(server), broken(), threads=2, chunk_docs=2)


def test_run_bulk_rejects_bad_options() -> None:
    with pytest.raises(ConfigError):
        run_bulk(object(), [], threads=0)


def test_make_client_needs_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIPQA_ES_URL", raising=False)
    with pytest.raises(ConfigError, match="TIPQA_ES_URL"):
        make_client()


def test_make_client_names_the_extra_when_the_package_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "elasticsearch", None)
    with pytest.raises(MissingExtraError, match=r"tipqa\[elasticsearch\]"):
        make_client(EsConnection(url="http://127.0.0.1:9200"))
