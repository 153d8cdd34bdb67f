"""Failed LLM calls leave questions undetermined; RetryFailed and a rebuild resolve them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import openai_server as fake
from support.seed_support import DemoBuilds, seed_run
from support.tests_support import luigi_config, rule_playing_server, run_luigi

from tipqa.core.jsonl import read_json, read_records
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.sources.demo.world import World, WorldSpec

pytestmark = [pytest.mark.slow, pytest.mark.needs("openai")]


def test_undetermined_questions_are_resolved_by_a_retry(
    tmp_path: Path, demo_builds: DemoBuilds
) -> None:
    world = World(WorldSpec(documents=700, seed=5, k1=20, files=3))
    cases = {e.question_id: e for e in world.expected()}
    broken = {
        q.answer
        for q in world.questions
        if cases[q.id].case in ("single", "split") and q.id in {"demo-q0000", "demo-q0019"}
    }
    outage = {"on": True}

    def flaky(body: dict, attempt: int, headers: dict) -> fake.Reply:
        content = fake.last_user_message(body)
        if outage["on"] and any(f"Expected answer: {a}\n" in content for a in broken):
            return fake.Reply(status=500, message="outage")
        return rule_playing_server(body, attempt, headers)

    with fake.FakeOpenAIServer(flaky) as server:
        judge = {"backend": "openai", "model": "tiny", "base_url": server.base_url}
        config = luigi_config(tmp_path, judge={**judge, "max_retries": "0"})
        seed_run(tmp_path, demo_builds())
        assert run_luigi(config, "CreateDataset").returncode == 30, "undetermined questions"
        partition = tmp_path / "outputs" / "t" / "pools" / "dev" / "partition"
        undetermined = read_records(partition / "undetermined.jsonl", LabeledQuestion)
        assert {r.id for r in undetermined} == {"demo-q0000", "demo-q0019"}
        assert all("failed" in r.reason for r in undetermined)

        outage["on"] = False
        asked_before = server.calls
        assert run_luigi(config, "RetryFailed").returncode == 0
        assert not partition.exists()
        assert run_luigi(config, "CreateDataset").returncode == 0
        rows = [
            r
            for label in LABELS
            for r in read_records(partition / f"{label}.jsonl", LabeledQuestion)
        ]
        assert {r.id: (r.label, r.stage) for r in rows} == {
            qid: (e.label, e.stage) for qid, e in cases.items()
        }
        retried = server.calls - asked_before
        assert 0 < retried < asked_before
        assert read_json(partition / "stats.json")["counts"]["undetermined"] == 0
