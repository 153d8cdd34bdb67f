"""The judge audit in a build: a fallible build judge whose errors are planted, and a right
second judge (`judge_audit_support`). Its disputes find the planted false labels, its figures
hold, a kill mid-audit loses nothing answered, and a bad second judge stops the audit with one
line naming its section while the build's labels stand."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import openai_server as fake
from support.fallible_judge import RIGHT, asked, prompts_of
from support.judge_audit_support import (
    FALLIBLE_LABELS,
    FALSELY_ANSWERABLE,
    FALSELY_UNANSWERABLE,
    WRONG_PASSAGES,
    planted_config,
    planted_rule,
    second_judge,
)
from support.tests_support import run_luigi

from tipqa.__main__ import main
from tipqa.core.jsonl import iter_records, read_json, read_records
from tipqa.core.layout import RunLayout, ShardLayout
from tipqa.core.records import LABELS, Judgment, LabeledQuestion

pytestmark = pytest.mark.slow

JUDGED = {"audit": {"judge_sample": "1"}}
"""Every question of every label re-judged (the world is small)."""


def judged_config(
    folder: Path, server: fake.FakeOpenAIServer, world: Path | None = None, **changes: Any
) -> Path:
    """The planted world's config with the right judge as `[audit.judge]` (`world`: where the
    world's files are, a copied build's original folder's)."""
    sections = {"audit.judge": second_judge(server), **JUDGED}
    for name, values in changes.items():
        sections[name] = {**sections.get(name, {}), **values}
    return planted_config(folder, server, world, **sections)


@pytest.fixture(scope="module")
def server() -> Iterator[fake.FakeOpenAIServer]:
    with fake.FakeOpenAIServer(planted_rule()) as running:
        yield running


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, server: fake.FakeOpenAIServer) -> Path:
    """A finished build of the planted world by the fallible judge, audited by the right one."""
    folder = tmp_path_factory.mktemp("planted")
    server.reset()
    result = run_luigi(judged_config(folder, server), "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    (folder / "right-asked").write_text(str(asked(server, RIGHT)))
    return folder


def run_of(folder: Path) -> RunLayout:
    return RunLayout(folder / "outputs" / "t")


def copied(built: Path, tmp_path: Path) -> RunLayout:
    shutil.copytree(built, tmp_path, dirs_exist_ok=True)
    return run_of(tmp_path)


def partition(run: RunLayout) -> dict[str, LabeledQuestion]:
    files = run.pool("dev").partition_files
    return {
        row.id: row
        for label in LABELS
        for row in read_records(files.labelled(label), LabeledQuestion)
    }


def judge_audit(run: RunLayout) -> dict[str, Any]:
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict)
    return audit["judge_audit"]


def test_the_fallible_judge_makes_the_planted_false_labels(built: Path) -> None:
    rows = partition(run_of(built))
    assert {qid: row.label for qid, row in rows.items()} == FALLIBLE_LABELS
    for qid, stage in FALSELY_ANSWERABLE.items():
        evidence = rows[qid].evidence
        assert rows[qid].stage == stage and evidence is not None
        assert WRONG_PASSAGES[qid] in " ".join(evidence.text.split())


def test_the_disputes_find_every_planted_false_label(built: Path) -> None:
    judged = judge_audit(run_of(built))
    assert set(judged) == {
        "judge", "answerable", "unanswerable", "discarded", "agreement", "judge_calls",
        "prompt_tokens",
    }  # fmt: skip
    assert judged["judge"] == {**judged["judge"], "backend": "openai", "model": RIGHT}
    counts = Counter(FALLIBLE_LABELS.values())
    for label in ("answerable", "unanswerable", "discarded"):
        block = judged[label]
        assert set(block) >= {"labelled", "audited", "disputed", "rate", "ci95", "by_stage"}
        assert block["labelled"] == block["audited"] == counts[label] and block["failed"] == 0
    answerable = {item["id"]: item for item in judged["answerable"]["disputed"]}
    assert set(answerable) == set(FALSELY_ANSWERABLE), "every planted false yes, nothing else"
    for qid, item in answerable.items():
        assert item["stage"] == FALSELY_ANSWERABLE[qid]
        assert WRONG_PASSAGES[qid] in " ".join(item["evidence"]["text"].split())
    unanswerable = {item["id"]: item for item in judged["unanswerable"]["disputed"]}
    assert set(unanswerable) == set(FALSELY_UNANSWERABLE), "every planted refusal"
    for qid, item in unanswerable.items():
        assert item["stage"] == FALSELY_UNANSWERABLE[qid], "the unit the second judge accepted"
        assert item["evidence"]["doc_id"] and item["evidence"]["text"]
    assert judged["discarded"]["disputed"] == []
    assert judged["answerable"]["by_stage"]["vector"] == {
        "audited": 1, "disputed": 1, "rate": 1.0,
    }  # fmt: skip


def test_the_rates_and_their_intervals_hold(built: Path) -> None:
    judged = judge_audit(run_of(built))
    for label, planted in (("answerable", 2), ("unanswerable", 2), ("discarded", 0)):
        block = judged[label]
        assert block["rate"] == planted / block["audited"]
        low, high = block["ci95"]
        assert 0 <= low <= block["rate"] <= high <= 1
        assert (low == 0) == (planted == 0) and (high == 1) == (planted == block["audited"])


def test_kappa_is_the_hand_computed_one_over_every_unit_both_judged(built: Path) -> None:
    pool = run_of(built).pool("dev")
    first = {}
    for folder in pool.shards.glob("shard-*"):
        shard = ShardLayout(folder)
        for path in (shard.token_judgments, shard.vector_judgments):
            for j in iter_records(path, Judgment):
                first[(j.question_id, j.unit_id)] = j.label
    second = list(iter_records(pool.judge_audit_judgments, Judgment))
    assert second and all(j.judge for j in second)
    pairs = [(first.get((j.question_id, j.unit_id), "yes"), j.label) for j in second]
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    yes_first = sum(a == "yes" for a, _ in pairs) / n
    yes_second = sum(b == "yes" for _, b in pairs) / n
    chance = yes_first * yes_second + (1 - yes_first) * (1 - yes_second)
    agreement = judge_audit(run_of(built))["agreement"]
    assert agreement["units"] == n
    assert agreement["observed"] == pytest.approx(observed)
    assert agreement["kappa"] == pytest.approx((observed - chance) / (1 - chance))
    low, high = agreement["ci95"]
    assert -1 <= low <= agreement["kappa"] <= high <= 1


def test_the_cache_keeps_the_judges_apart_and_the_cost_is_counted(built: Path) -> None:
    run = run_of(built)
    judged = judge_audit(run)
    judgments = list(iter_records(run.pool("dev").judge_audit_judgments, Judgment))
    assert judged["judge_calls"] == len(judgments) and judged["prompt_tokens"] > 0
    asked_once = sum(not j.cached for j in judgments)
    assert asked_once == int((built / "right-asked").read_text()), "the rest from the cache"
    second = {(j.question_id, j.unit_id): j.label for j in judgments}
    for qid in FALSELY_UNANSWERABLE:
        assert "yes" in {label for (q, _), label in second.items() if q == qid}, (
            "the right judge's answer, never the fallible one's from the cache"
        )
    text = (run.report / "report.md").read_text()
    card = (run.hub / "README.md").read_text()
    for page in (text, card):
        assert "A second judge (`openai` model `right`) re-judged" in page
        assert "| dev | answerable | 3 | not searched | - | 2 of 3 (66.7%) |" in page
    assert "- judge audit of pool **dev** (`openai` model `right`): disputes 2 of 3 answerable" in (
        run.summary.read_text()
    )


def test_without_a_second_judge_the_pages_say_the_judge_is_unmeasured(
    built: Path, server: fake.FakeOpenAIServer, tmp_path: Path
) -> None:
    run = copied(built, tmp_path)
    config = planted_config(tmp_path, server, built / "world", **JUDGED)
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict) and "judge_audit" not in audit
    for page in (run.report / "report.md", run.hub / "README.md"):
        assert "The judge's own errors are not measured in this build" in page.read_text()


def slow_right(delay: float) -> fake.Rule:
    """The planted rule, the right judge answering after `delay` seconds."""
    rule = planted_rule()

    def slowed(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        reply = rule(body, attempt, headers)
        if body.get("model") == RIGHT:
            reply.delay = delay
        return reply

    return slowed


def test_a_kill_mid_audit_then_a_resume_asks_nothing_twice(built: Path, tmp_path: Path) -> None:
    run = copied(built, tmp_path)
    shutil.rmtree(run.llm_cache)
    with fake.FakeOpenAIServer(slow_right(0.3)) as slow:
        config = judged_config(tmp_path, slow, built / "world")
        command = [sys.executable, "-m", "tipqa", "audit", str(run.root), "--config", str(config)]
        running = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while asked(slow, RIGHT) < 12 and time.monotonic() < deadline:
            time.sleep(0.02)
        in_flight = slow.in_flight
        running.send_signal(signal.SIGKILL)
        running.wait()
        assert 12 <= asked(slow, RIGHT) < int((built / "right-asked").read_text())
        finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert finished.returncode == 0, finished.stderr[-3000:]
        repeated = Counter(prompts_of(slow, RIGHT))
    twice = sum(n - 1 for n in repeated.values())
    assert twice <= in_flight, f"{twice} prompts asked again, {in_flight} were in flight"
    assert (
        judge_audit(run)["answerable"]["disputed"]
        == judge_audit(run_of(built))["answerable"]["disputed"]
    )


def test_a_bad_second_judge_stops_the_audit_in_one_line_and_the_labels_stand(
    built: Path, server: fake.FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = copied(built, tmp_path)
    labels = {qid: row.label for qid, row in partition(run).items()}
    typo = judged_config(tmp_path, server, built / "world", **{"audit.judge": {"modle": RIGHT}})
    with pytest.raises(SystemExit) as exited:
        main(["audit", str(run.root), "--config", str(typo)])
    assert exited.value.code == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "[audit.judge]" in error and "modle" in error
    shutil.rmtree(run.llm_cache)
    with fake.FakeOpenAIServer(planted_rule()) as gone:
        pass  # stopped: the second judge's server answers nothing
    gone_judge = {**second_judge(gone), "max_retries": "0"}
    unreachable = judged_config(tmp_path, server, built / "world", **{"audit.judge": gone_judge})
    with pytest.raises(SystemExit) as exited:
        main(["audit", str(run.root), "--config", str(unreachable)])
    assert exited.value.code == 30
    last = capsys.readouterr().err.strip().split("\n")[-1].split("\r")[-1]
    assert last.startswith("error: [audit.judge]: ") and "undetermined in the judge audit" in last
    assert {qid: row.label for qid, row in partition(run).items()} == labels
    assert not run.pool("dev").audit_stats.exists()
    result = run_luigi(unreachable, "CreateDataset")
    assert result.returncode == 30
    assert {qid: row.label for qid, row in partition(run).items()} == labels
