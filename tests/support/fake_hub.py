"""A local HTTP server standing in for the Hugging Face Hub API (the Hub cannot be reached here).

It implements the calls `huggingface_hub.HfApi` makes to create a dataset repository, list its
tree, validate a card's YAML, and commit files: regular files inline, `.parquet` files through
the git-LFS batch API with a basic PUT upload (the client must run with `HF_HUB_DISABLE_XET`:
the Xet storage protocol is not imitated). Repositories live in memory; every request is
recorded with its Authorization header, so tests can check what was sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import yaml


@dataclass
class StoredFile:
    """A file of a fake repository."""

    content: bytes
    lfs: bool

    @property
    def blob_id(self) -> str:
        """The git blob id (of the LFS pointer for an LFS file, as on the Hub)."""
        data = self.pointer if self.lfs else self.content
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

    @property
    def sha256(self) -> str:
        """The SHA-256 of the content (the LFS oid)."""
        return hashlib.sha256(self.content).hexdigest()

    @property
    def pointer(self) -> bytes:
        """The git-LFS pointer file."""
        return (
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\n"
            f"size {len(self.content)}\n"
        ).encode()


@dataclass
class Repo:
    """A fake dataset repository."""

    private: bool
    files: dict[str, StoredFile] = field(default_factory=dict)
    commits: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Request:
    """One request the server received."""

    method: str
    path: str
    authorization: str | None
    body: bytes


class FakeHub:
    """The server's state; `url` is the endpoint to give `HfApi` (or HF_ENDPOINT)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def calls(self, method: str, pattern: str) -> list[Request]:
        """The requests of `method` whose path matches `pattern`."""
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    def commits(self, repo_id: str) -> list[dict[str, Any]]:
        """The commits made to `repo_id`: header and the operations, in order."""
        return self.repos[repo_id].commits


REPO = r"(?P<repo>[^/]+/[^/]+)"
ROUTES = [
    ("POST", r"^/api/repos/create$", "create_repo"),
    ("GET", rf"^/api/datasets/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<sub>.*))?$", "tree"),
    ("POST", r"^/api/validate-yaml$", "validate_yaml"),
    ("POST", rf"^/api/datasets/{REPO}/preupload/(?P<rev>[^/]+)$", "preupload"),
    ("POST", rf"^/datasets/{REPO}\.git/info/lfs/objects/batch$", "lfs_batch"),
    ("PUT", r"^/lfs-upload/(?P<oid>[0-9a-f]{64})$", "lfs_put"),
    ("POST", rf"^/api/datasets/{REPO}/commit/(?P<rev>[^/]+)$", "commit"),
]


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def _serve(self, method: str) -> None:
            parsed = urlparse(self.path)
            path = unquote(parsed.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            auth = self.headers.get("Authorization")
            with hub.lock:
                hub.requests.append(Request(method, path, auth, body))
            if auth is not None and auth != f"Bearer {hub.token}":
                return self._send(401, {"error": "Invalid credentials in Authorization header"})
            for verb, pattern, name in ROUTES:
                match = re.match(pattern, path)
                if verb == method and match:
                    with hub.lock:
                        status, payload, headers = getattr(self, name)(
                            match.groupdict(), parse_qs(parsed.query), body, auth is not None
                        )
                    return self._send(status, payload, headers)
            return self._send(404, {"error": f"no route {method} {path}"})

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _repo(self, repo_id: str, authed: bool) -> Repo | None:
            repo = hub.repos.get(repo_id)
            return None if repo is None or (repo.private and not authed) else repo

        def create_repo(self, args, query, body, authed):
            if not authed:
                return 401, {"error": "You must be authenticated"}, {}
            data = json.loads(body)
            repo_id = f"{data['organization']}/{data['name']}"
            url = f"{hub.url}/datasets/{repo_id}"
            if repo_id in hub.repos:
                return 409, {"error": "You already created this dataset repo", "url": url}, {}
            private = data.get("visibility", "private" if data.get("private") else "public")
            repo = Repo(private=private == "private")
            repo.files[".gitattributes"] = StoredFile(b"*.parquet filter=lfs diff=lfs\n", False)
            hub.repos[repo_id] = repo
            return 200, {"url": url}, {}

        def tree(self, args, query, body, authed):
            repo = self._repo(args["repo"], authed)
            if repo is None:
                return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
            entries, folders = [], set()
            for name, item in sorted(repo.files.items()):
                parts = name.split("/")
                folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
                entry = {
                    "type": "file",
                    "oid": item.blob_id,
                    "size": len(item.content),
                    "path": name,
                }
                if item.lfs:
                    size = len(item.content)
                    entry["lfs"] = {
                        "oid": item.sha256,
                        "size": size,
                        "pointerSize": len(item.pointer),
                    }
                entries.append(entry)
            entries += [{"type": "directory", "oid": "0" * 40, "path": f} for f in sorted(folders)]
            return 200, entries, {}

        def validate_yaml(self, args, query, body, authed):
            content = json.loads(body)["content"]
            match = re.match(r"\A---\n(.*?)\n---\n", content, re.S)
            try:
                meta = yaml.safe_load(match.group(1)) if match else None
            except yaml.YAMLError as exc:
                return 400, {"errors": [{"message": str(exc)}]}, {}
            if not isinstance(meta, dict):
                return 400, {"errors": [{"message": "no YAML metadata"}]}, {}
            return 200, {"errors": [], "warnings": []}, {}

        def preupload(self, args, query, body, authed):
            repo = self._repo(args["repo"], authed)
            if repo is None:
                return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
            files = []
            for item in json.loads(body)["files"]:
                mode = "lfs" if item["path"].endswith(".parquet") else "regular"
                stored = repo.files.get(item["path"])
                oid = None if stored is None else (stored.sha256 if stored.lfs else stored.blob_id)
                files.append(
                    {"path": item["path"], "uploadMode": mode, "shouldIgnore": False, "oid": oid}
                )
            return 200, {"files": files, "commitOid": "0" * 40}, {}

        def lfs_batch(self, args, query, body, authed):
            if self._repo(args["repo"], authed) is None:
                return 404, {"message": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
            objects = []
            for item in json.loads(body)["objects"]:
                entry = {"oid": item["oid"], "size": item["size"], "authenticated": True}
                if item["oid"] not in hub.lfs:
                    href = f"{hub.url}/lfs-upload/{item['oid']}"
                    entry["actions"] = {"upload": {"href": href}}
                objects.append(entry)
            return 200, {"transfer": "basic", "objects": objects}, {}

        def lfs_put(self, args, query, body, authed):
            if hashlib.sha256(body).hexdigest() != args["oid"]:
                return 400, {"error": "content does not match its oid"}, {}
            hub.lfs[args["oid"]] = body
            return 200, {}, {}

        def commit(self, args, query, body, authed):
            repo = self._repo(args["repo"], authed)
            if repo is None or not authed:
                return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            header, operations = lines[0]["value"], lines[1:]
            for op in operations:
                key, value = op["key"], op["value"]
                if key == "file":
                    repo.files[value["path"]] = StoredFile(
                        base64.b64decode(value["content"]), False
                    )
                elif key == "lfsFile":
                    if value["oid"] not in hub.lfs:
                        return 400, {"error": f"LFS object {value['oid']} was not uploaded"}, {}
                    repo.files[value["path"]] = StoredFile(hub.lfs[value["oid"]], True)
                elif key == "deletedFile":
                    if value["path"] not in repo.files:
                        return 404, {"error": "A file with this name doesn't exist"}, {}
                    del repo.files[value["path"]]
                else:
                    return 400, {"error": f"unsupported operation {key}"}, {}
            oid = hashlib.sha1(body).hexdigest()
            repo.commits.append(
                {"summary": header["summary"], "operations": operations, "oid": oid}
            )
            url = f"{hub.url}/datasets/{args['repo']}/commit/{oid}"
            return 200, {"commitUrl": url, "commitOid": oid, "pullRequestUrl": None}, {}

    return Handler
