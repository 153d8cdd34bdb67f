"""The whole build on Elasticsearch gives the partition of the embedded backends.

Runs only against a real cluster: set TIPQA_ES_URL (and ES_API_KEY, TIPQA_ES_CA_CERTS as the
cluster needs). The indexes it creates are deleted afterwards.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from support.seed_support import DemoBuilds, seed_run
from support.tests_support import luigi_config, run_luigi

from tipqa.core.records import LABELS

pytestmark = [
    pytest.mark.elasticsearch,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("TIPQA_ES_URL"), reason="TIPQA_ES_URL is not set"),
]


def partition_files(root: Path) -> dict[str, bytes]:
    folder = root / "outputs" / "t" / "pools" / "dev" / "partition"
    return {label: (folder / f"{label}.jsonl").read_bytes() for label in LABELS}


def test_elasticsearch_build_equals_embedded_build(tmp_path: Path, demo_builds: DemoBuilds) -> None:
    from tipqa.indexes.es.client import make_client

    name = f"tipqa-test-{uuid.uuid4().hex[:8]}"
    embedded = tmp_path / "embedded"
    embedded.mkdir()
    reference = luigi_config(embedded)
    seed_run(embedded, demo_builds())
    assert run_luigi(reference, "CreateDataset").returncode == 0
    remote = tmp_path / "remote"
    remote.mkdir()
    config = luigi_config(
        remote,
        token_index={"backend": "elasticsearch", "index": f"{name}-token"},
        vector_index={
            "backend": "elasticsearch",
            "index": f"{name}-vector",
            "num_candidates": "2000",
        },
    )
    try:
        result = run_luigi(config, "CreateDataset", "--workers", "2")
        assert result.returncode == 0, result.stderr[-3000:]
        assert partition_files(remote) == partition_files(embedded)
    finally:
        make_client().indices.delete(index=f"{name}*", ignore_unavailable=True)
