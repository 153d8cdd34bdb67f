"""The split protocol: test from one pool, a balanced validation sample and train from another."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from support.partition_fixtures import CONFIG, DEV, INFO, TRAIN, provenance, write_pool

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import LabeledQuestion, VectorInstance
from tipqa.core.steps import Step
from tipqa.dataset.provenance import construction_parameters
from tipqa.dataset.splits import SplitPlan, SplitSettings, make_splits, sample_validation
from tipqa.llm.prompts import load_template
from tipqa.lmeval_task.task_files import write_task_folder

RECORD = StepRecord(Step.SPLITS, {})


@pytest.fixture
def run(tmp_path: Path) -> RunLayout:
    """A run with a dev and a train partition with disjoint ids."""
    return pools(tmp_path / "run")


def pools(root: Path) -> RunLayout:
    layout = RunLayout(root)
    write_pool(layout, "dev", DEV)
    write_pool(layout, "train", TRAIN)
    return layout


def ids(path: Path) -> list[str]:
    return [r.id for r in read_records(path, LabeledQuestion)]


def test_plan_from_settings() -> None:
    both = SplitPlan.of(SplitSettings("dev", "train", 5, 1), ["dev", "train"])
    assert both.splits == ("train", "validation", "test")
    assert both.used_pools == ["dev", "train"]
    assert SplitPlan.of(SplitSettings("dev", "train", 5, 1), ["dev"]).train_pool is None
    assert SplitPlan.of(SplitSettings("dev", "", 5, 1), ["dev", "train"]).splits == ("test",)
    with pytest.raises(ConfigError, match=r"test_pool 'test'.*dev, train"):
        SplitPlan.of(SplitSettings("test", "train", 5, 1), ["dev", "train"])
    with pytest.raises(ConfigError, match="both 'dev'"):
        SplitSettings("dev", "dev")
    with pytest.raises(ConfigError, match="validation_per_label"):
        SplitSettings("dev", "train", -1)


def test_splits_follow_the_plan(run: RunLayout) -> None:
    stats = make_splits(run, SplitPlan("dev", "train", 5, seed=3), RECORD)
    layout = SplitsLayout(run.splits)
    test_rows = read_records(layout.questions("test"), LabeledQuestion)
    validation = read_records(layout.questions("validation"), LabeledQuestion)
    train_rows = read_records(layout.questions("train"), LabeledQuestion)

    assert {r.label for r in test_rows} == {"answerable", "unanswerable"}
    assert len(test_rows) == DEV["answerable"] + DEV["unanswerable"]
    assert all(r.id.startswith("dev-") for r in test_rows)
    assert sum(r.label == "answerable" for r in validation) == 5
    assert sum(r.label == "unanswerable" for r in validation) == 5
    assert len(train_rows) == TRAIN["answerable"] + TRAIN["unanswerable"] - 10
    every = [r.id for rows in (test_rows, validation, train_rows) for r in rows]
    assert len(every) == len(set(every))
    assert not any(r.label in ("discarded", "undetermined") for r in [*validation, *train_rows])

    info = stats.info
    assert info["splits"]["test"]["answerable"] == 9
    assert info["splits"]["train"]["unanswerable"] == 3
    assert info["pools"]["train"]["discarded"] == 3
    assert info["pools"]["dev"]["undetermined"] == 1
    assert info["pools"]["dev"]["left_out"] == 3
    assert info["validation"]["short"] is False
    by_stage = info["splits"]["test"]["by_stage"]
    assert sum(by_stage.values()) == len(test_rows)
    assert by_stage["unanswerable_vector"] == 4
    assert read_json(layout.stats)["counts"]["validation.answerable"] == 5


def test_instances_go_with_their_questions(run: RunLayout) -> None:
    stats = make_splits(run, SplitPlan("dev", "train", 4, 0), RECORD)
    layout = SplitsLayout(run.splits)
    for split in ("train", "validation", "test"):
        questions = set(ids(layout.questions(split)))
        instances = read_records(layout.instances(split), VectorInstance)
        vector = {
            r.id for r in read_records(layout.questions(split), LabeledQuestion)
            if r.stage == "vector"
        }  # fmt: skip
        assert {i.question_id for i in instances} == vector <= questions
        assert len(instances) == 3 * len(vector) == stats.info["splits"][split]["instances"]
    relevance = stats.info["splits"]["test"]["instance_relevance"]
    assert relevance["unknown"] == 0 and relevance["yes"] == 3


def test_validation_sample_is_seeded(tmp_path: Path) -> None:
    runs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        layout = pools(tmp_path / name)
        make_splits(layout, SplitPlan("dev", "train", 4, seed), RECORD)
        runs[name] = ids(SplitsLayout(layout.splits).questions("validation"))
    assert runs["a"] == runs["b"]
    assert runs["a"] != runs["c"]


def test_short_validation_stays_balanced_and_is_reported(run: RunLayout) -> None:
    stats = make_splits(run, SplitPlan("dev", "train", 1000, 0), RECORD)
    validation = stats.info["validation"]
    assert validation["short"] is True
    assert validation["taken_per_label"] == TRAIN["unanswerable"]
    assert stats.info["splits"]["validation"]["answerable"] == TRAIN["unanswerable"]
    assert stats.info["splits"]["train"]["unanswerable"] == 0
    assert stats.counts["validation.short_per_label"] == 1000 - TRAIN["unanswerable"]


def test_sample_validation_with_nothing_on_one_side() -> None:
    chosen, info = sample_validation(["q1", "q2", "q3"], [], 3, 0)
    assert chosen == set() and info["taken_per_label"] == 0 and info["short"]
    chosen, info = sample_validation(["q1", "q2", "q3"], ["u1", "u2"], 0, 0)
    assert chosen == set() and not info["short"]


def test_without_a_train_pool_only_test_is_made(run: RunLayout) -> None:
    stats = make_splits(run, SplitPlan("dev", None, 0, 0), RECORD)
    assert list(stats.info["splits"]) == ["test"]
    assert stats.info["validation"] is None and list(stats.info["pools"]) == ["dev"]
    assert sorted(p.name for p in run.splits.iterdir()) == ["stats.json", "test"]


def test_the_evaluation_files_are_written_before_the_stats(run: RunLayout) -> None:
    def evaluation(folder: Path) -> None:
        assert not (folder / "stats.json").exists()
        write_task_folder(folder)

    make_splits(run, SplitPlan("dev", None, 0, 0), RECORD, evaluation=evaluation)
    assert sorted(p.name for p in run.splits.iterdir()) == ["lm_eval_tasks", "stats.json", "test"]


def test_pools_sharing_questions_are_refused(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, "dev", DEV, ids="same")
    write_pool(layout, "train", TRAIN, ids="same")
    with pytest.raises(InputError, match=r"'same-\w+-\d+' is in split 'test' and in split"):
        make_splits(layout, SplitPlan("dev", "train", 2, 0), RECORD)
    assert not layout.splits_stats.exists()


def test_pools_built_otherwise_are_refused(tmp_path: Path) -> None:
    other = provenance({**CONFIG, "build": {**CONFIG["build"], "k1": "100"}})
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, "dev", DEV)
    write_pool(layout, "train", TRAIN, build=other)
    with pytest.raises(InputError, match=r"different \w+ settings or inputs: rerun"):
        make_splits(layout, SplitPlan("dev", "train", 2, 0), RECORD)


def test_pools_may_differ_in_their_questions_only(tmp_path: Path) -> None:
    other = copy.deepcopy(INFO)
    other["steps"]["questions"]["settings"]["pool"]["limit"] = 3
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, "dev", DEV)
    write_pool(layout, "train", TRAIN, build=other)
    assert make_splits(layout, SplitPlan("dev", "train", 2, 0), RECORD).info["parameters"]


def test_bad_partitions_name_the_file(run: RunLayout) -> None:
    dev, train = run.pool("dev").partition, run.pool("train").partition
    (train / "undetermined.jsonl").unlink()
    with pytest.raises(InputError, match=r"undetermined\.jsonl"):
        make_splits(run, SplitPlan("dev", "train", 2, 0), RECORD)
    rows = read_records(dev / "unanswerable.jsonl", LabeledQuestion)
    write_records(dev / "answerable.jsonl", rows)
    with pytest.raises(InputError, match=r"answerable.jsonl.*labelled 'unanswerable'"):
        make_splits(run, SplitPlan("dev", None, 0, 0), RECORD)


def test_a_partition_of_another_schema_version_names_the_remedy(run: RunLayout) -> None:
    stats = run.pool("dev").partition_stats
    stats.write_text(stats.read_text().replace('"schema_version": 1', '"schema_version": 0'))
    with pytest.raises(InputError, match=r"schema version 0.*rerun luigi --module pipelines"):
        make_splits(run, SplitPlan("dev", "train", 2, 0), RECORD)


def test_construction_parameters_come_from_the_recorded_steps() -> None:
    params = construction_parameters(INFO)
    assert params["k1"] == 20 and params["k2"] == 3
    assert params["keywords"]["prompt_sha256"] == load_template("keywords-v1").sha256
    assert params["keywords"]["model"] == "gpt-4o-mini"
    assert params["judge"] == {"backend": "rules", "rules_version": "v1"}
    assert params["windows"] == {"max_words": 500, "max_windows": 16}
    assert params["embedder"]["model"] == "all-MiniLM-L6-v2"
    assert params["corpus"]["source"] == "demo"
