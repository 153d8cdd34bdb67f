"""The confirming judge `[judge.confirm]` in a build of the planted world: the fallible build
judge's false yes answers do not survive; the right judge is asked once per yes; a changed
confirming judge re-asks only its own prompts; a kill mid-confirmation loses nothing answered;
a bad or unreachable confirming judge stops with one line and leaves a finished build's labels.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import openai_server as fake
from support.audit_support import LABELS, labels
from support.fallible_judge import FALLIBLE, RIGHT, asked, prompts_of
from support.judge_audit_support import (
    FALLIBLE_LABELS,
    FALSELY_ANSWERABLE,
    FALSELY_UNANSWERABLE,
    planted_config,
    planted_rule,
)
from support.tests_support import run_luigi

from tipqa.audit.compare import compare_runs
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import Judgment, LabeledQuestion

pytestmark = pytest.mark.slow

CONFIRMED_LABELS = {**FALLIBLE_LABELS, **{qid: LABELS[qid] for qid in FALSELY_ANSWERABLE}}
"""The labels with the right judge confirming: no false answerable is left; the refusals stay
(a confirming judge only sees the yes answers)."""
CONFIRM = {"judge.confirm": {"model": RIGHT}}


class Stalling:
    """The planted world's rule, stalling the right judge's answers after `after` of them (the
    prompts it answered are kept, in order)."""

    def __init__(self, after: float) -> None:
        self.rule = planted_rule()
        self.after = after
        self.release = threading.Event()
        self.answered: list[tuple[str, str]] = []
        self.stalled = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
        model, prompt = body.get("model", ""), fake.last_user_message(body)
        if model == RIGHT:
            with self._lock:
                right = sum(m == RIGHT for m, _ in self.answered) + self.stalled
                stall = right >= self.after
                self.stalled += stall
            if stall:
                self.release.wait(120)
                return fake.Reply(status=503, message="stalled")
        reply = self.rule(body, attempt, headers)
        with self._lock:
            self.answered.append((model, prompt))
        return reply


@pytest.fixture(scope="module")
def stalling() -> Stalling:
    return Stalling(after=float("inf"))


@pytest.fixture(scope="module")
def server(stalling: Stalling) -> Iterator[fake.FakeOpenAIServer]:
    with fake.FakeOpenAIServer(stalling) as running:
        yield running


def build(config: Path) -> RunLayout:
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    return RunLayout(config.parent / "outputs" / "t")


def judgments(run: RunLayout) -> list[Judgment]:
    shards = sorted((run.root / "pools" / "dev" / "shards").iterdir())
    return [
        judgment
        for shard in shards
        for name in ("token_judgments.jsonl", "vector_judgments.jsonl")
        for judgment in read_records(shard / name, Judgment)
    ]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory, server: fake.FakeOpenAIServer) -> RunLayout:
    """The fallible judge's build, without confirmation."""
    return build(planted_config(tmp_path_factory.mktemp("plain"), server))


@pytest.fixture(scope="module")
def confirmed(
    tmp_path_factory: pytest.TempPathFactory, server: fake.FakeOpenAIServer
) -> tuple[RunLayout, int]:
    """The fallible judge's build confirmed by the right judge, and the right judge's requests."""
    folder = tmp_path_factory.mktemp("confirmed")
    server.reset()
    run = build(planted_config(folder, server, **CONFIRM))
    return run, asked(server, RIGHT)


def test_no_planted_false_yes_survives_and_each_yes_is_asked_once(
    confirmed: tuple[RunLayout, int],
) -> None:
    run, right_asked = confirmed
    assert labels(run) == CONFIRMED_LABELS
    assert all(CONFIRMED_LABELS[qid] == "unanswerable" for qid in FALSELY_UNANSWERABLE)
    made = judgments(run)
    yes = [j for j in made if j.label == "yes"]
    assert right_asked == len(yes) > 0, "the confirming judge is asked once per yes"
    assert all(j.confirmation is not None for j in yes)
    assert all(j.confirmation is None for j in made if j.label != "yes")
    refuted = {j.question_id for j in yes if j.confirmation and j.confirmation.label == "no"}
    assert set(FALSELY_ANSWERABLE) <= refuted
    partition = run.pool("dev").partition_files
    for row in read_records(partition.labelled("answerable"), LabeledQuestion):
        assert row.evidence is not None and row.evidence.confirmation is not None
        assert row.evidence.confirmation.label == "yes"


def test_compare_shows_the_flips_of_confirmation(
    plain: RunLayout, confirmed: tuple[RunLayout, int]
) -> None:
    assert labels(plain) == FALLIBLE_LABELS
    result = compare_runs(plain.root, confirmed[0].root)
    assert sorted(flip["id"] for flip in result["flips"]) == sorted(FALSELY_ANSWERABLE)
    assert result["b"]["parameters"]["confirm_judge"]["model"] == RIGHT
    assert "confirm_judge" not in result["a"]["parameters"]
    for flip in result["flips"]:
        assert flip["a"]["label"] == "answerable" and flip["b"]["label"] != "answerable"
        assert "confirmation" not in flip["a"]["evidence"]


def test_a_changed_confirming_judge_reasks_only_its_own_prompts(
    confirmed: tuple[RunLayout, int], server: fake.FakeOpenAIServer, tmp_path: Path
) -> None:
    shutil.copytree(confirmed[0].root.parent.parent, tmp_path, dirs_exist_ok=True)
    server.reset()
    changed = {"judge.confirm": {"model": RIGHT, "mode": "plain"}}
    run = build(planted_config(tmp_path, server, **changed))
    assert asked(server, FALLIBLE) == 0, "the build judge's answers come from the cache"
    assert asked(server, RIGHT) == confirmed[1]
    assert labels(run) == CONFIRMED_LABELS


def test_preview_cost_and_the_report_count_the_confirmation_prompts(
    confirmed: tuple[RunLayout, int], server: fake.FakeOpenAIServer, tmp_path: Path
) -> None:
    run, right_asked = confirmed
    counted = read_json(run.pool("dev").partition_stats)["info"]["judging"]
    assert counted["confirmation_prompts"] == right_asked
    assert counted["confirmation_yes"] + counted["confirmation_no"] == right_asked
    report = (run.report / "report.md").read_text()
    assert f"| dev | {counted['prompts']} | {right_asked} |" in report
    config = planted_config(tmp_path, server, **CONFIRM, build={"cost_sample": "1"})
    result = run_luigi(config, "PreviewCost", "--pool", "dev")
    assert result.returncode == 0, result.stderr[-4000:]
    preview = read_json(tmp_path / "outputs" / "t" / "pools" / "dev" / "cost_preview.json")
    bound = preview["confirmation"]["prompts_at_most"]["estimate"]
    assert bound == preview["judge_prompts_at_most"]["estimate"] >= right_asked


def test_a_kill_mid_confirmation_then_a_resume_asks_nothing_answered_again(
    stalling: Stalling, server: fake.FakeOpenAIServer, tmp_path: Path
) -> None:
    config = planted_config(tmp_path, server, **CONFIRM)
    stalling.answered.clear()
    stalling.after, stalling.stalled = 2, 0
    stalling.release.clear()
    env = {**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines", "CreateDataset"]
    process = subprocess.Popen(
        [*command, "--local-scheduler", "--no-lock"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not stalling.stalled and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert stalling.stalled, "the build reached a confirmation"
    before = set(stalling.answered)
    in_flight = stalling.stalled
    stalling.after = float("inf")
    stalling.release.set()
    time.sleep(0.2)
    stalling.answered.clear()
    server.reset()
    run = build(config)
    again = [(model, p) for model in (FALLIBLE, RIGHT) for p in prompts_of(server, model)]
    assert not before & set(again), "a prompt answered before the kill was asked again"
    assert asked(server, RIGHT) > 0 and in_flight >= 1
    assert labels(run) == CONFIRMED_LABELS


def test_a_bad_or_unreachable_confirming_judge_stops_with_one_line_and_keeps_the_labels(
    confirmed: tuple[RunLayout, int], server: fake.FakeOpenAIServer, tmp_path: Path
) -> None:
    shutil.copytree(confirmed[0].root.parent.parent, tmp_path, dirs_exist_ok=True)
    run = RunLayout(tmp_path / "outputs" / "t")
    before = labels(run)
    unknown = {"judge.confirm": {"model": RIGHT, "modl": "x"}}
    result = run_luigi(planted_config(tmp_path, server, **unknown), "CreateDataset")
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert "[judge.confirm] unknown key 'modl'; did you mean 'model'?" in said
    dead = {"model": "bigger", "base_url": "http://127.0.0.1:9/v1", "max_retries": "0"}
    result = run_luigi(planted_config(tmp_path, server, **{"judge.confirm": dead}), "CreateDataset")
    said = result.stdout + result.stderr
    assert result.returncode != 0
    line = "[judge.confirm] the judge openai:bigger"
    assert line in said and "did not answer (connection)" in said
    assert "Traceback" not in said.split(line)[0].splitlines()[-1]
    assert labels(run) == before == CONFIRMED_LABELS
