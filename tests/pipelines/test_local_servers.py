"""The build through `[judge] backend = openai` against servers in each documented shape.

One small demo world and its indexes are built once (rules backends); each test then redoes
only the pool's partition (`Partition --pool dev`) against a local server answering in the
shape of one real server, and must end in the labels the world was built with. The shape
with chat-layout logprobs (OpenAI, vLLM) is `tests/pipelines/test_llm_backends.py`'s build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import openai_server as fake
from support.tests_support import luigi_config, rule_playing_server, run_luigi

from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, Judgment, LabeledQuestion
from tipqa.sources.demo.world import Expected

pytestmark = [pytest.mark.slow, pytest.mark.needs("openai")]

WORLD = {
    "build": {"name": "s", "shard_size": "50", "k1": "20", "k2": "10"},
    "demo": {"documents": "350", "seed": "5", "files": "2"},
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo world with its token and vector indexes (built with the rules backends)."""
    root = tmp_path_factory.mktemp("servers")
    result = run_luigi(luigi_config(root, **WORLD), "Partition", "--pool", "dev")
    assert result.returncode == 0, result.stderr[-3000:]
    return root


def partition_with(root: Path, server: fake.FakeOpenAIServer, **judge: str) -> Path:
    """Redo the dev pool's partition with keywords and judge on `server`; the run folder."""
    run = root / "outputs" / "s"
    shutil.rmtree(run / "pools", ignore_errors=True)
    shutil.rmtree(run / "llm-cache", ignore_errors=True)
    llm = {"backend": "openai", "model": f"local-{server.shape}", "base_url": server.base_url}
    config = luigi_config(root, **WORLD, keywords=llm, judge={**llm, **judge})
    result = run_luigi(config, "Partition", "--pool", "dev")
    assert result.returncode == 0, result.stderr[-3000:]
    return run


def assert_labels_as_built(run: Path) -> None:
    """Every question has the label and stage the demo world was built with."""
    expected = read_records(RunLayout(run).world.expected, Expected)
    partition = run / "pools" / "dev" / "partition"
    rows = [
        r for name in LABELS for r in read_records(partition / f"{name}.jsonl", LabeledQuestion)
    ]
    assert {r.id: (r.label, r.stage) for r in rows} == {
        e.question_id: (e.label, e.stage) for e in expected
    }


def judgments(run: Path) -> list[Judgment]:
    shards = run / "pools" / "dev" / "shards"
    return [
        j
        for path in sorted(shards.glob("*/*_judgments.jsonl"))
        for j in read_records(path, Judgment)
    ]


def judge_counts(run: Path) -> dict[str, int]:
    """The judge steps' counters, summed over shards and both stages."""
    total: dict[str, int] = {}
    for path in (run / "pools" / "dev" / "shards").glob("*/*_judge.stats.json"):
        for name, value in read_json(path)["counts"].items():
            total[name.removeprefix("OpenAIJudge.")] = (
                total.get(name.removeprefix("OpenAIJudge."), 0) + value
            )
    return total


def test_server_that_ignores_logprobs(world: Path) -> None:
    with fake.FakeOpenAIServer(rule_playing_server, shape="no-logprobs") as server:
        run = partition_with(world, server)
        asked = [b for b in server.bodies if "Passage:" in fake.last_user_message(b)]
    assert_labels_as_built(run)
    assert asked and all(b["logprobs"] is True for b in asked)
    found = judgments(run)
    assert found and all(j.p_yes is None and j.error is None for j in found)
    assert judge_counts(run)["logprobs_missing"] == len(found)


def test_older_completions_logprobs_layout(world: Path) -> None:
    with fake.FakeOpenAIServer(rule_playing_server, shape="completions-logprobs") as server:
        run = partition_with(world, server)
    assert_labels_as_built(run)
    assert {(j.label, round(j.p_yes or 0, 3)) for j in judgments(run)} == {
        ("yes", 0.9),
        ("no", 0.1),
    }


def test_server_without_usage(world: Path) -> None:
    with fake.FakeOpenAIServer(rule_playing_server, shape="no-usage") as server:
        run = partition_with(world, server)
    assert_labels_as_built(run)
    counts = judge_counts(run)
    assert counts["usage_missing"] == counts["calls"] > 0
    assert counts["prompt_tokens"] == 0
    questions = len(read_records(RunLayout(run).world.expected, Expected))
    shards = run / "pools" / "dev" / "shards"
    keywords = [read_json(p)["counts"] for p in shards.glob("*/keywords.stats.json")]
    assert sum(c["OpenAIKeywordExtractor.usage_missing"] for c in keywords) == questions


def test_ollama_in_plain_mode(world: Path) -> None:
    with fake.FakeOpenAIServer(rule_playing_server, shape="ollama") as server:
        run = partition_with(world, server, mode="plain")
        asked = [b for b in server.bodies if "Passage:" in fake.last_user_message(b)]
    assert_labels_as_built(run)
    assert asked and not any("logprobs" in b for b in asked)
    assert all(j.p_yes is None for j in judgments(run))
    assert "logprobs_missing" not in judge_counts(run)


def test_llama_server(world: Path) -> None:
    with fake.FakeOpenAIServer(rule_playing_server, shape="llama.cpp") as server:
        run = partition_with(world, server)
    assert_labels_as_built(run)
    assert {(j.label, round(j.p_yes or 0, 3)) for j in judgments(run)} == {
        ("yes", 0.9),
        ("no", 0.1),
    }
