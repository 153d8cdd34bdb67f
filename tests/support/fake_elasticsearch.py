"""A recording stand-in for an Elasticsearch node, for tests of the index builds' requests.

It keeps indexes in memory and answers the part of the REST API the index builds use
(index existence, creation, mapping, settings, `_bulk` create actions, single documents of
the ledger, count, refresh), with the product header the official client checks. Every
request is recorded in arrival order as (method, path, body), so a test can check the order
in which many workers' requests reached the cluster. It is not a search engine: searches
are not answered.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit


class FakeElasticsearch:
    """The server; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.indexes: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The node's URL."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeElasticsearch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def calls(self, index: str) -> list[tuple[str, str, Any]]:
        """The recorded requests that concern `index` (not its ledger), in order."""
        return [call for call in self.requests if call[1].split("/")[1] in (index, "_bulk")]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, body = server.handle(self.command, self.path, raw)
                payload = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("X-Elastic-Product", "Elasticsearch")
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _answer

        return Handler

    def handle(self, method: str, target: str, raw: bytes) -> tuple[int, Any]:
        """Record and answer one request."""
        path = unquote(urlsplit(target).path)
        text = raw.decode() if raw else ""
        body: Any = (
            [json.loads(line) for line in text.splitlines() if line.strip()]
            if path.endswith("/_bulk")
            else json.loads(text)
            if text
            else None
        )
        with self._lock:
            self.requests.append((method, path, body))
            return self._route(method, path, body)

    def _route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = path.strip("/").split("/", 2)
        if parts == [""]:
            return 200, {"version": {"number": "9.0.0"}, "tagline": "You Know, for Search"}
        if parts[0] == "_bulk" or (len(parts) > 1 and parts[1] == "_bulk"):
            return 200, self._bulk(body)
        name = parts[0]
        index = self.indexes.get(name)
        action = parts[1] if len(parts) > 1 else ""
        if not action:
            if method == "HEAD":
                return (200 if index else 404), None
            if method == "PUT":
                if index is not None:
                    return 400, {"error": {"type": "resource_already_exists_exception"}}
                self.indexes[name] = {
                    "uuid": uuid.uuid4().hex,
                    "mappings": (body or {}).get("mappings", {}),
                    "settings": (body or {}).get("settings", {}),
                    "docs": {},
                }
                return 200, {"acknowledged": True, "index": name}
        if index is None:
            return 404, {"error": {"type": "index_not_found_exception"}, "status": 404}
        if action == "_mapping":
            return 200, {name: {"mappings": index["mappings"]}}
        if action == "_settings":
            if method == "PUT":
                return 200, {"acknowledged": True}
            return 200, {name: {"settings": {"index": {"uuid": index["uuid"]}}}}
        if action == "_refresh":
            return 200, {"_shards": {"failed": 0}}
        if action == "_count":
            return 200, {"count": len(index["docs"])}
        if action == "_doc":
            doc_id = parts[2]
            if method == "GET":
                if doc_id not in index["docs"]:
                    return 404, {"found": False}
                return 200, {"_id": doc_id, "found": True, "_source": index["docs"][doc_id]}
            index["docs"][doc_id] = body
            return 200, {"_id": doc_id, "result": "created"}
        return 400, {"error": {"type": "not_supported_by_the_fake", "reason": path}}

    def _bulk(self, lines: list[Any]) -> dict[str, Any]:
        items = []
        for action, source in zip(lines[::2], lines[1::2], strict=True):
            ((op, meta),) = action.items()
            docs = self.indexes.setdefault(
                meta["_index"],
                {"uuid": uuid.uuid4().hex, "mappings": {}, "settings": {}, "docs": {}},
            )["docs"]
            if op == "create" and meta["_id"] in docs:
                items.append(
                    {
                        op: {
                            "_id": meta["_id"],
                            "status": 409,
                            "error": {"type": "version_conflict_engine_exception"},
                        }
                    }
                )
                continue
            docs[meta["_id"]] = source
            items.append({op: {"_id": meta["_id"], "status": 201, "result": "created"}})
        return {"errors": any(i[next(iter(i))]["status"] >= 300 for i in items), "items": items}
