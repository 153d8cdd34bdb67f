"""The audit in a build: on a world with planted misses and a judge that is always right, it
finds exactly the misses; applied, it moves them through the splits, qrels and card; its
settings rerun only what shows it; and two judges' builds compare as counted here."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import openai_server as fake
from support.audit_support import (
    FACTS,
    LABELS,
    MISSED,
    SETTINGS,
    labels,
    perfect_judge,
    write_world,
)
from support.explorer_support import Page
from support.tests_support import luigi_config, run_luigi

from tipqa.__main__ import main
from tipqa.audit.compare import compare_runs
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout, ShardLayout, SplitsLayout
from tipqa.core.records import Judgment, LabeledQuestion
from tipqa.core.steps import Step
from tipqa.dataset.qrels import QRELS_FILE, read_qrels
from tipqa.dataset.retry import reset_shard
from tipqa.dataset.splits import read_audit

pytestmark = [pytest.mark.slow, pytest.mark.needs("openai")]


def two_judges(body: dict[str, Any], attempt: int, headers: dict[str, str]) -> fake.Reply:
    """The perfect judge (model `perfect`), or one that says yes wherever the answer is."""
    rule = perfect_judge if body.get("model") == "perfect" else fake.judge_rule
    return rule(body, attempt, headers)


@pytest.fixture(scope="module")
def server() -> Iterator[fake.FakeOpenAIServer]:
    with fake.FakeOpenAIServer(two_judges) as running:
        yield running


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    return write_world(tmp_path_factory.mktemp("world"))


def configure(folder: Path, world: dict, server: fake.FakeOpenAIServer, **changes: dict) -> Path:
    """The config file of a build of the planted world in `folder`, with `changes` merged."""
    sections = {**world, **SETTINGS}
    sections["judge"] = {**SETTINGS["judge"], "base_url": server.base_url}
    for name, values in changes.items():
        sections[name] = {**sections.get(name, {}), **values}
    return luigi_config(folder, **sections)


def build(config: Path) -> RunLayout:
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    return RunLayout(config.parent / "outputs" / "t")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, world: dict, server: Any) -> Path:
    """A finished build of the planted world, every unanswerable and discarded one audited."""
    folder = tmp_path_factory.mktemp("built")
    build(configure(folder, world, server))
    return folder


def copied(built: Path, tmp_path: Path) -> RunLayout:
    shutil.copytree(built, tmp_path, dirs_exist_ok=True)
    return RunLayout(tmp_path / "outputs" / "t")


def reran(before: dict[Path, int], run: RunLayout) -> set[str]:
    """The steps whose stats file was written since `before`."""
    return {
        read_json(path)["step"]
        for path in run.root.rglob("*stats.json")
        if before.get(path) != path.stat().st_mtime_ns
    }


def times(run: RunLayout) -> dict[Path, int]:
    return {path: path.stat().st_mtime_ns for path in run.root.rglob("*stats.json")}


def test_the_audit_finds_the_planted_misses_and_flags_nothing_else(built: Path) -> None:
    run = RunLayout(built / "outputs" / "t")
    assert labels(run) == LABELS, "Algorithm 1 misses what the world planted"
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict)
    found = {item["id"]: item for item in audit["found"]}
    assert {qid: item["label"] for qid, item in found.items()} == MISSED
    for qid, item in found.items():
        assert FACTS[qid] in " ".join(item["evidence"]["text"].split())
        assert item["evidence"]["stage"] == "audit" and item["evidence"]["relaxation"]
    assert found["wrong_keyword"]["cause"] == "keywords_minus_one"
    assert found["deeper"]["cause"] == "vector_deeper", "no phrase of it matches: only vectors"
    for label in ("unanswerable", "discarded"):
        figures = audit["by_label"][label]
        truly = sum(given == label for given in MISSED.values())
        assert figures["labelled"] == figures["audited"] == Counter(LABELS.values())[label]
        assert figures["found"] == truly
        low, high = figures["ci95"]
        assert low <= truly / figures["labelled"] <= high
    assert audit["rate"] == 0.5 and read_audit(run.pool("dev"))["applied"] is False
    assert audit["judge_calls"] == len(read_records(run.pool("dev").audit_judgments, Judgment))
    assert audit["build"]["judge_calls"] > 0 and audit["prompt_tokens"] > 0
    assert "- audit of pool **dev**: 3 of 6 unanswerable with evidence (50.0%" in (
        run.summary.read_text()
    )
    for page in (run.hub / "README.md", run.report / "report.md"):
        text = page.read_text()
        assert "Of the 6 questions of pool `dev` labelled unanswerable" in text
        assert "| dev | discarded | 2 | 2 | 1 | 50.0% |" in text
    test = {
        row.id: row
        for row in read_records(SplitsLayout(run.splits).questions("test"), LabeledQuestion)
    }
    assert (test["misspelled"].verbatim_docs, test["misspelled"].verbatim_with_alias) == (1, 0)
    assert (test["normal_city"].verbatim_docs, test["normal_city"].verbatim_with_alias) == (1, 1)


def test_the_command_audits_a_sample_of_a_finished_build(
    built: Path, world: dict, server: Any, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = copied(built, tmp_path)
    config = configure(tmp_path, world, server)
    with pytest.raises(SystemExit) as exited:
        main(["audit", str(run.root), "--config", str(config), "--sample", "0.5", "--seed", "3"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("- audit of pool **dev**:")
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict) and audit["settings"]["audit"]["sample"] == 0.5
    unanswerable = audit["by_label"]["unanswerable"]
    assert unanswerable["audited"] == 3 and len(audit["audited_ids"]["discarded"]) == 1
    assert {item["id"] for item in audit["found"]} <= set(MISSED)
    low, high = unanswerable["ci95"]
    assert low <= 0.5 <= high


def test_a_failed_judgment_is_never_a_clean_no_in_the_audit(
    built: Path, world: dict, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = copied(built, tmp_path)
    shutil.rmtree(run.llm_cache)
    with fake.FakeOpenAIServer(two_judges) as gone:
        pass  # stopped: nothing answers at its address any more
    config = configure(tmp_path, world, gone, judge={"max_retries": "0"})
    command = ["audit", str(run.root), "--config", str(config), "--sample", "1"]
    with pytest.raises(SystemExit) as exited:
        main(command)
    assert exited.value.code == 30
    error = capsys.readouterr().err
    last = error.strip().split("\n")[-1].split("\r")[-1]
    assert last.startswith("error: pool 'dev': 8 audited questions are undetermined"), last
    assert "RetryFailed" in last and "--accept-undetermined" in last
    assert not run.pool("dev").audit_stats.exists(), "an unfinished audit runs again"
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict)
    unanswerable = audit["by_label"]["unanswerable"]
    assert (unanswerable["failed"], unanswerable["rate"], unanswerable["ci95"]) == (6, None, None)
    with pytest.raises(SystemExit) as exited:
        main([*command, "--accept-undetermined"])
    assert exited.value.code == 0
    assert "0 of 0 unanswerable with evidence (-, 95% CI -, 6 undetermined: a judgment failed)" in (
        capsys.readouterr().out
    )
    assert run.pool("dev").audit_stats.exists()


def test_the_audit_follows_the_partition_it_read_through_a_retry(
    built: Path, world: dict, server: Any, tmp_path: Path
) -> None:
    run = copied(built, tmp_path)
    shutil.rmtree(run.llm_cache)
    for shard in run.pool("dev").shards.glob("shard-*"):
        reset_shard(ShardLayout(shard), Step.TOKEN_JUDGE)  # judged again, by a judge now gone
    run.pool("dev").partition_stats.unlink()
    with fake.FakeOpenAIServer(two_judges) as gone:
        pass  # stopped: every judgment fails, every question is undetermined
    failing = run_luigi(
        configure(tmp_path, world, gone, judge={"max_retries": "0"}), "CreateDataset"
    )
    assert failing.returncode == 30
    assert set(labels(run).values()) == {"undetermined"}, failing.stderr[-3000:]
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict) and audit["audited"] == 0, "the partition it read"
    config = configure(tmp_path, world, server)
    assert run_luigi(config, "RetryFailed").returncode == 0
    build(config)
    assert labels(run) == LABELS
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict) and audit["audited"] == 8
    assert {item["id"]: item["label"] for item in audit["found"]} == MISSED
    assert (
        "Pool `dev` has no unanswerable question to audit"
        not in (run.hub / "README.md").read_text()
    )


def test_applied_the_findings_move_to_answerable_through_splits_qrels_and_card(
    built: Path, world: dict, server: Any, tmp_path: Path
) -> None:
    run = copied(built, tmp_path)
    before = times(run)
    build(configure(tmp_path, world, server, audit={"apply": "true"}))
    assert reran(before, run) == {Step.SPLITS, Step.HUB_FOLDER, Step.REPORT}
    assert labels(run) == LABELS, "the partition keeps Algorithm 1's labels"
    splits = SplitsLayout(run.splits)
    test = {row.id: row for row in read_records(splits.questions("test"), LabeledQuestion)}
    for qid in MISSED:
        assert (test[qid].label, test[qid].stage) == ("answerable", "audit")
    assert {qid for qid, row in test.items() if row.label == "unanswerable"} == {
        "absent_ship", "absent_flag", "absent_horse",
    }  # fmt: skip
    audit = read_audit(run.pool("dev"))
    assert audit["applied"] is True, "read from the splits' record"
    qrels = read_qrels(splits.root / "test" / QRELS_FILE)
    for item in audit["found"]:
        assert qrels[item["id"]][item["evidence"]["doc_id"]] == 1
    info = read_json(run.splits_stats)["info"]
    assert info["audit"]["dev"]["moved"] == {"unanswerable": 3, "discarded": 1}
    card = (run.hub / "README.md").read_text()
    assert "answerable (audit)" in card and "| audit applied | pool `dev`: 3 unanswerable" in card
    assert "| Audit: answerable |" in (run.report / "report.md").read_text()


def test_audit_settings_rerun_only_the_audit_and_what_shows_it(
    built: Path, world: dict, server: Any, tmp_path: Path
) -> None:
    run = copied(built, tmp_path)
    before = times(run)
    build(configure(tmp_path, world, server, audit={"budget": "4"}))
    assert reran(before, run) == {Step.AUDIT, Step.HUB_FOLDER, Step.REPORT}
    assert read_json(run.pool("dev").audit)["settings"]["audit"]["budget"] == 4


def test_two_judges_compare_as_their_labels_count(
    built: Path, world: dict, server: Any, tmp_path: Path
) -> None:
    run = copied(built, tmp_path / "naive")
    build(configure(tmp_path / "naive", world, server, judge={"model": "naive"}))
    first, second = labels(RunLayout(built / "outputs" / "t")), labels(run)
    result = compare_runs(built / "outputs" / "t", run.root)
    counted = Counter((first[qid], second[qid]) for qid in first)
    assert {
        (a, b): n for a, row in result["matrix"].items() for b, n in row.items() if n
    } == counted
    flipped = sorted(qid for qid in first if first[qid] != second[qid])
    assert sorted(flip["id"] for flip in result["flips"]) == flipped
    assert flipped == ["absent_discarded", "absent_horse", "after_k1"]
    assert result["flips_by_stage"] == {"token -> token": 2, "vector -> token": 1}


def test_the_report_s_page_follows_the_audit_back_to_the_configured_sample(
    built: Path, world: dict, server: Any, tmp_path: Path
) -> None:
    """`tipqa audit --sample`, `tipqa explore`, then `CreateDataset`: the page shows the audit
    of the configured settings again, as audit.json, the report and the card do."""
    run = copied(built, tmp_path)
    config = configure(tmp_path, world, server)
    audit_half = ["audit", str(run.root), "--config", str(config), "--sample", "0.5"]
    for argv in (audit_half, ["explore", str(run.root)]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0
    shown = Page(run.report / "explorer").meta["audit"]["dev"]
    assert shown["settings"]["audit"]["sample"] == 0.5
    build(config)
    audit = read_json(run.pool("dev").audit)
    assert isinstance(audit, dict) and audit["settings"]["audit"]["sample"] != 0.5
    shown = Page(run.report / "explorer").meta["audit"]["dev"]
    assert shown["settings"] == audit["settings"]
    assert shown["fingerprint"] == audit["fingerprint"] and shown["audited"] == audit["audited"]
