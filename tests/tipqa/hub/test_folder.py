"""The Hub-ready folder, loaded back with `datasets.load_dataset` as users will load it."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import yaml
from support.partition_fixtures import DEV, TRAIN, build_splits

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json
from tipqa.core.layout import RunLayout
from tipqa.core.steps import Step
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import write_explorer

CARD = HubSettings(repo_id="someone/tip-demo", pretty_name="TIP demo", language="en")
RECORD = StepRecord(Step.HUB_FOLDER, {})


def load(folder: Path, config: str, cache: Path) -> datasets.DatasetDict:
    return datasets.load_dataset(str(folder), config, cache_dir=str(cache))


def front_matter(folder: Path) -> dict:
    text = (folder / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_configurations_splits_features_and_rows(tmp_path: Path) -> None:
    run = build_splits(tmp_path, per_label=3)
    folder = run.hub
    built = build_hub_folder(run, CARD, RECORD)

    questions = load(folder, "questions", tmp_path / "cache")
    assert set(questions) == {"train", "validation", "test"}
    assert questions["test"].num_rows == DEV["answerable"] + DEV["unanswerable"]
    assert questions["validation"].num_rows == 6
    assert questions["train"].num_rows == TRAIN["answerable"] + TRAIN["unanswerable"] - 6
    features = questions["test"].features
    assert features["aliases"].feature.dtype == "string"
    assert features["total_matches"].dtype == "int64"
    assert {"evidence_doc_id", "evidence_text", "label", "stage", "reason"} <= set(features)
    row = next(r for r in questions["test"] if r["label"] == "answerable" and r["stage"] == "token")
    assert row["evidence_doc_id"] and row["evidence_text"].startswith("Fact")
    unanswerable = next(r for r in questions["test"] if r["label"] == "unanswerable")
    assert unanswerable["evidence_doc_id"] is None

    instances = load(folder, "instances", tmp_path / "cache")
    assert set(instances) == {"train", "validation", "test"}
    assert instances["test"].features["relevant"].dtype == "bool"
    for split in instances:
        assert instances[split].num_rows == built.rows["instances"][split]
        assert set(instances[split]["question_id"]) <= set(questions[split]["id"])

    stats = read_json(run.hub_stats)
    assert stats["counts"]["questions.test"] == questions["test"].num_rows
    assert [p.name for p in folder.glob("*.json")] == ["croissant.json"]

    meta = front_matter(folder)
    assert [c["config_name"] for c in meta["configs"]] == ["questions", "instances"]
    assert meta["configs"][0]["default"] is True
    assert meta["pretty_name"] == "TIP demo" and meta["language"] == ["en"]
    assert datasets.get_dataset_config_names(str(folder)) == ["questions", "instances"]


def test_rebuilding_gives_the_same_bytes(tmp_path: Path) -> None:
    run = build_splits(tmp_path)
    build_hub_folder(run, CARD, RECORD)
    first = {p.relative_to(run.hub): p.read_bytes() for p in run.hub.rglob("*.*")}
    build_hub_folder(run, CARD, RECORD)
    # the card, croissant.json, 6 Parquet files, the lm-eval task and its utils.py
    assert len(first) == 10
    assert {p.relative_to(run.hub): p.read_bytes() for p in run.hub.rglob("*.*")} == first


def test_large_splits_are_sharded(tmp_path: Path) -> None:
    run = build_splits(tmp_path, per_label=3)
    folder = run.hub
    built = build_hub_folder(run, HubSettings(rows_per_file=4), RECORD)
    test_files = built.files["questions"]["test"]
    assert test_files == [f"questions/test-{i:05d}-of-00004.parquet" for i in range(4)]
    assert all((folder / name).is_file() for name in test_files)
    questions = load(folder, "questions", tmp_path / "cache")
    assert questions["test"].num_rows == 13
    assert len(set(questions["test"]["id"])) == 13


def test_empty_splits_and_configurations_are_left_out(tmp_path: Path) -> None:
    token_only = {"answerable": 4}
    run = build_splits(tmp_path, train=False, dev_counts=token_only)
    built = build_hub_folder(run, CARD, RECORD)
    # every answerable question with index % 3 == 0 is decided by the vector stage
    assert built.rows == {"questions": {"test": 4}, "instances": {"test": 6}}

    only = build_splits(tmp_path / "token", train=False, dev_counts={"answerable": 2})
    (only.splits / "test" / "instances.jsonl").write_bytes(b"")
    built = build_hub_folder(only, CARD, RECORD)
    assert built.rows == {"questions": {"test": 2}}
    assert not (only.hub / "instances").exists()
    meta = front_matter(only.hub)
    assert [c["config_name"] for c in meta["configs"]] == ["questions"]
    assert "`instances` / `test`" in (only.hub / "README.md").read_text()
    assert set(load(only.hub, "questions", tmp_path / "cache")) == {"test"}


def test_a_failed_build_keeps_the_previous_folder(tmp_path: Path) -> None:
    run = build_splits(tmp_path)
    build_hub_folder(run, CARD, RECORD)
    before = (run.hub / "README.md").read_bytes()
    (run.splits / "train" / "questions.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(InputError, match=r"train/questions.jsonl, line 1"):
        build_hub_folder(run, CARD, RECORD)
    assert (run.hub / "README.md").read_bytes() == before
    with pytest.raises(InputError, match=r"stats\.json: no stats file"):
        build_hub_folder(RunLayout(tmp_path / "nowhere"), CARD, RECORD)


def test_the_explorer_page_is_in_the_folder_when_asked(tmp_path: Path) -> None:
    run = build_splits(tmp_path, per_label=2)
    build_hub_folder(run, CARD, RECORD)
    assert not (run.hub / "explorer").exists()
    with pytest.raises(ConfigError, match="no explorer page writer"):
        build_hub_folder(run, HubSettings(explorer=True), RECORD)

    def explorer(folder: Path) -> int:
        return write_explorer(run, TextSource(), folder)["questions"]

    build_hub_folder(run, HubSettings(explorer=True), RECORD, explorer=explorer)
    assert (run.hub / "explorer" / "index.html").is_file()
    assert read_json(run.hub_stats)["counts"]["explorer.questions"] > 0
