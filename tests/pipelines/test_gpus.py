"""The offline vLLM engine under `--workers 2`: one engine at a time on one GPU slot, counted."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.tests_support import luigi_config, run_luigi

from pipelines import gpus
from pipelines.shard_steps import TokenJudge
from tipqa.config import Choice
from tipqa.core.jsonl import read_json
from tipqa.llm.gpu_slots import read_claims
from tipqa.llm.judges.rules import RuleJudgeSettings
from tipqa.llm.judges.vllm import VLLMJudgeSettings

needs_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="vllm is not installed: this test runs in .venv-vllm (see .ci/run)",
)


def test_engine_tasks_take_the_gpu_resource_where_it_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = Choice("vllm", VLLMJudgeSettings(model="m", tensor_parallel_size=2))
    task = TokenJudge(pool="dev", shard=0)
    monkeypatch.setattr(TokenJudge, "inputs", lambda self: SimpleNamespace(llm=engine))
    monkeypatch.setattr(gpus, "configured_gpus", lambda: None)
    assert task.resources == {}
    monkeypatch.setattr(gpus, "configured_gpus", lambda: 8)
    assert task.resources == {"gpu": 2}
    rules = SimpleNamespace(llm=Choice("rules", RuleJudgeSettings()))
    monkeypatch.setattr(TokenJudge, "inputs", lambda self: rules)
    assert task.resources == {}


def engine_judge(model: Path) -> dict[str, str]:
    """[judge] on the offline engine with the tiny model (constrained: always yes or no)."""
    return {
        "backend": "vllm",
        "model": str(model),
        "mode": "choice",
        "max_model_len": "1024",
        "enforce_eager": "true",
        "dtype": "float32",
        "batch_size": "64",
    }


@pytest.mark.slow
@pytest.mark.vllm
@needs_vllm
def test_two_workers_share_one_gpu_slot_and_count_engine_starts(
    tmp_path: Path, vllm_environment: Path, tiny_model: Path
) -> None:
    sections = {
        "build": {"name": "t", "shard_size": "15", "k1": "5", "k2": "3"},
        "demo": {"documents": "200", "seed": "5", "files": "2"},
        "vector_index": {"backend": "faiss", "kind": "flat"},
        "judge": engine_judge(tiny_model),
    }
    (tmp_path / "unplaced").mkdir()
    unplaced = luigi_config(tmp_path / "unplaced", **sections)
    refused = run_luigi(unplaced, "CreateDataset", "--workers", "2")
    assert refused.returncode != 0
    assert "[resources] gpu" in refused.stdout + refused.stderr

    config = luigi_config(tmp_path, **sections, resources={"gpu": "1"})
    done = run_luigi(config, "CreateDataset", "--workers", "2")
    assert done.returncode == 0, done.stderr[-4000:]
    run = tmp_path / "outputs" / "t"
    shards = sorted((run / "pools" / "dev" / "shards").iterdir())
    assert len(shards) >= 2
    starts = sum(
        int(v)
        for shard in shards
        for path in shard.glob("*judge.stats.json")
        for k, v in read_json(path)["counts"].items()
        if k.endswith(".engine_starts")
    )
    claims = read_claims(tmp_path / "outputs" / "gpu-slots" / socket.gethostname())
    events = [(entry["event"], entry["slot"]) for entry in claims]
    assert events == [("claimed", 0), ("released", 0)] * starts
    holders = [entry["pid"] for entry in claims]
    assert holders[::2] == holders[1::2] and len(set(holders)) == starts >= 2
    partition = read_json(run / "pools" / "dev" / "partition" / "stats.json")
    assert partition["info"]["llm_engine_starts"] == starts
    assert f"vLLM offline engines started: {starts}" in (run / "summary.md").read_text()
