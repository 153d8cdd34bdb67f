"""An Elasticsearch token index built by four workers: build mode on once, serving once after.

The luigi command runs with `--workers 4` against a recording stand-in of an Elasticsearch
node; the order of the requests that reach it is what is checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_elasticsearch import FakeElasticsearch
from support.tests_support import luigi_config, run_luigi

INDEX = "tipqa-workers"
FILES = 4
PER_FILE = 15


def corpus(folder: Path) -> Path:
    """Four corpus files of fifteen documents each."""
    folder.mkdir()
    for part in range(FILES):
        lines = [
            json.dumps({"id": f"d{part}-{i}", "text": f"Document {i} of part {part} of Varnholt."})
            for i in range(PER_FILE)
        ]
        (folder / f"part-{part}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.needs("elasticsearch")
def test_four_workers_put_the_build_settings_on_once_and_serve_once(tmp_path: Path) -> None:
    with FakeElasticsearch() as node:
        config = luigi_config(
            tmp_path,
            corpus={"source": "files", "paths": str(corpus(tmp_path / "corpus"))},
            token_index={"backend": "elasticsearch", "index": INDEX, "threads": "1"},
            elasticsearch={"url": node.url},
        )
        result = run_luigi(config, "BuildTokenIndex", "--workers", "4")
        assert result.returncode == 0, result.stderr[-4000:]
        calls = node.calls(INDEX)
        kinds = [_kind(method, path, body) for method, path, body in calls]
        bulks = [i for i, kind in enumerate(kinds) if kind == "bulk"]
        assert len(bulks) >= FILES
        assert kinds.count("create") == 1 and kinds.index("create") < bulks[0]
        assert kinds.count("build settings") == 0, "a created index starts in build mode"
        assert kinds.count("serving settings") == 1
        assert kinds.index("serving settings") > bulks[-1]
        created = next(
            body for method, path, body in calls if _kind(method, path, body) == "create"
        )
        assert created["settings"]["index"]["refresh_interval"] == "-1"
        assert created["mappings"]["_meta"]["tipqa"]["build"]
        assert len(node.indexes[INDEX]["docs"]) == FILES * PER_FILE
        ledger = node.indexes[INDEX + "-tipqa-meta"]["docs"]
        assert sum(key.startswith("part:") for key in ledger) == FILES and "complete" in ledger

        sent = len(node.requests)
        again = run_luigi(config, "BuildTokenIndex", "--workers", "4")
        assert again.returncode == 0, again.stderr[-4000:]
        assert len(node.requests) == sent, "a finished build is known without asking the cluster"


def _kind(method: str, path: str, body: object) -> str:
    """What a request to the index does."""
    if path.endswith("/_bulk"):
        return "bulk"
    if method == "PUT" and path == f"/{INDEX}":
        return "create"
    if method == "PUT" and path.endswith("/_settings") and isinstance(body, dict):
        refresh = body.get("index", {}).get("refresh_interval")
        return "build settings" if refresh == "-1" else "serving settings"
    return method.lower()


@pytest.mark.needs("elasticsearch")
def test_workers_index_a_repeated_id_under_the_id_a_pass_over_the_corpus_gives(
    tmp_path: Path,
) -> None:
    """Each worker reads one file apart; an id that an earlier file has still gets `d#2`, as
    tantivy and the vector index read it, whichever worker runs first."""
    folder = corpus(tmp_path / "corpus")
    repeat = json.dumps({"id": "d0-0", "text": "A second document with the id d0-0."})
    with open(folder / f"part-{FILES - 1}.jsonl", "a") as handle:
        handle.write(repeat + "\n" + repeat + "\n")
    with FakeElasticsearch() as node:
        config = luigi_config(
            tmp_path,
            corpus={"source": "files", "paths": str(folder)},
            token_index={"backend": "elasticsearch", "index": INDEX, "threads": "1"},
            elasticsearch={"url": node.url},
        )
        result = run_luigi(config, "BuildTokenIndex", "--workers", "4")
        assert result.returncode == 0, result.stderr[-4000:]
        docs = node.indexes[INDEX]["docs"]
    assert len(docs) == FILES * PER_FILE + 2
    assert {"d0-0", "d0-0#2", "d0-0#3"} <= set(docs)
