"""Where a run keeps its files."""

from __future__ import annotations

from pathlib import Path

from tipqa.core.layout import (
    BoundaryLayout,
    EvaluationLayout,
    PoolLayout,
    RunLayout,
    ShardLayout,
    TrainingIndexLayout,
    model_slug,
)


def test_run_layout_paths(tmp_path: Path) -> None:
    run = RunLayout.of(tmp_path, "demo")
    assert run.root == tmp_path / "demo"
    assert run.world.root == tmp_path / "demo" / "world"
    assert run.token_index == tmp_path / "demo" / "index" / "token"
    assert run.vector_index == tmp_path / "demo" / "index" / "vector"
    assert run.llm_cache == tmp_path / "demo" / "llm-cache"
    assert run.splits == tmp_path / "demo" / "splits"
    assert RunLayout.of(str(tmp_path), "demo") == run


def test_pool_and_shard_paths(tmp_path: Path) -> None:
    pool = RunLayout.of(tmp_path, "r").pool("dev")
    assert pool == PoolLayout(tmp_path / "r" / "pools" / "dev")
    assert pool.questions == pool.root / "questions.jsonl"
    assert pool.partition == pool.root / "partition"
    shard = pool.shard(7)
    assert shard == ShardLayout(pool.root / "shards" / "shard-00007")
    assert shard.token_decisions == shard.root / "token_decisions.jsonl"
    assert shard.stats("token_judge") == shard.root / "token_judge.stats.json"
    assert pool.shard(123456).root.name == "shard-123456"


def test_layouts_create_nothing(tmp_path: Path) -> None:
    RunLayout.of(tmp_path, "r").pool("dev").shard(0).data("x")
    assert list(tmp_path.iterdir()) == []


def test_boundary_and_training_index_paths(tmp_path: Path) -> None:
    run = RunLayout.of(tmp_path, "r")
    boundary = run.pool("dev").boundary
    assert boundary == BoundaryLayout(tmp_path / "r" / "pools" / "dev" / "boundary")
    assert boundary.checkpoint(143_000) == boundary.root / "questions_step143000.jsonl"
    assert boundary.first_seen.name == "first_seen.jsonl" and boundary.stats.name == "stats.json"
    assert boundary.checkpoint_files() == []
    index = run.training_index("abc")
    assert index == TrainingIndexLayout(tmp_path / "training_index" / "abc")
    assert RunLayout.of(tmp_path, "other").training_index("abc") == index  # shared by runs
    assert index.stats == index.root / "build.stats.json"
    assert list(tmp_path.iterdir()) == []


def test_evaluation_paths_and_model_folders(tmp_path: Path) -> None:
    run = RunLayout.of(tmp_path, "r")
    evaluation = run.evaluation("vllm", "EleutherAI/pythia-12b-deduped", "test")
    root = tmp_path / "r" / "evaluate" / "vllm-EleutherAI--pythia-12b-deduped" / "test"
    assert evaluation == EvaluationLayout(root)
    assert evaluation.predictions == root / "predictions.jsonl"
    assert evaluation.stats == root / "evaluate.stats.json"
    assert model_slug("gpt-4o-mini") == "gpt-4o-mini"
    assert model_slug("/models/a/llama") != model_slug("/models/b/llama")
    assert model_slug("/models/a/llama").startswith("llama-")
    assert model_slug("./llama").startswith("llama-") and model_slug("") == "model"
