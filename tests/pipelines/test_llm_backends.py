"""The whole build with OpenAI-compatible keywords and judge, against a local server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import openai_server as fake
from support.seed_support import DemoBuilds, seed_run
from support.tests_support import luigi_config, rule_playing_server, run_luigi

from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.sources.demo.world import Expected

pytestmark = [pytest.mark.slow, pytest.mark.needs("openai")]
SECRET = "sk-test-tipqa-7d1c0ffee"


def test_llm_backends_label_like_the_rules_and_a_rerun_pays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_builds: DemoBuilds
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with fake.FakeOpenAIServer(rule_playing_server) as server:
        llm = {"backend": "openai", "model": "tiny", "base_url": server.base_url}
        judge = {**llm, "max_concurrency": "4"}
        # the whole corpus as the sample: the estimate is the exact upper bound
        config = luigi_config(tmp_path, keywords=llm, judge=judge, build={"cost_sample": "1"})
        seed_run(tmp_path, demo_builds())
        preview = run_luigi(config, "PreviewCost", "--pool", "dev")
        assert preview.returncode == 0, preview.stderr[-3000:]
        judge_calls_before = server.calls
        first = run_luigi(config, "CreateDataset")
        assert first.returncode == 0, first.stderr[-3000:]
        paid = server.calls
        assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
        run = tmp_path / "outputs" / "t"
        estimate = read_json(run / "pools" / "dev" / "cost_preview.json")
        token_prompts = sum(
            read_json(p)["counts"].get("prompts", 0)
            for p in (run / "pools" / "dev" / "shards").glob("*/token_judge.stats.json")
        )
        token = estimate["token_stage"]
        assert token["prompts_at_least_in_sample"] <= token_prompts
        assert token_prompts <= token["prompts_at_most"]["estimate"]
        assert paid - judge_calls_before > 0

        expected = {e.question_id: e for e in read_records(RunLayout(run).world.expected, Expected)}
        partition = run / "pools" / "dev" / "partition"
        rows = [
            r
            for label in LABELS
            for r in read_records(partition / f"{label}.jsonl", LabeledQuestion)
        ]
        assert {r.id: (r.label, r.stage) for r in rows} == {
            qid: (e.label, e.stage) for qid, e in expected.items()
        }
        labels_before = {name: (partition / f"{name}.jsonl").read_bytes() for name in LABELS}

        shutil.rmtree(run / "pools")
        server.reset()
        again = run_luigi(config, "CreateDataset")
        assert again.returncode == 0, again.stderr[-3000:]
        assert server.calls == 0
        assert {n: (partition / f"{n}.jsonl").read_bytes() for n in LABELS} == labels_before
        hits = sum(
            read_json(p)["counts"].get("OpenAIJudge.cache_hits", 0)
            for p in (run / "pools" / "dev" / "shards").glob("*/*judge.stats.json")
        )
        assert hits > 0
        written = [p for p in run.rglob("*") if p.is_file() and p.suffix in {".json", ".jsonl"}]
        for text in [first.stdout, first.stderr, again.stderr, *(p.read_text() for p in written)]:
            assert SECRET not in text
