"""The Hub folder's `relevance` configuration and its TREC qrels, from a build's splits."""

from __future__ import annotations

from pathlib import Path

import datasets
import yaml
from support.partition_fixtures import write_pool

from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import RunLayout
from tipqa.core.records import JudgedUnit
from tipqa.core.steps import Step
from tipqa.dataset.qrels import read_qrels, write_relevance
from tipqa.dataset.splits import SplitPlan, make_splits
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings


def test_the_relevance_configuration_and_qrels(tmp_path: Path) -> None:
    run = RunLayout(tmp_path / "run")
    dev = write_pool(run, "dev", {"answerable": 2, "unanswerable": 1})
    answerable, unanswerable = dev["answerable"][0].id, dev["unanswerable"][0].id
    units = [
        JudgedUnit(answerable, "token", "d0", "d0@w0", 0, 0.1, "rules", 0, 12),
        JudgedUnit(answerable, "token", "d0", "d0@w1", 1, 0.9, "rules", 20, 48),
        JudgedUnit(unanswerable, "vector", "d2", "d2#1", 0, None, "rules"),
    ]
    write_relevance([units], run.pool("dev").partition)
    make_splits(run, SplitPlan("dev", None, 0, 0), StepRecord(Step.SPLITS, {}))
    built = build_hub_folder(
        run, HubSettings(repo_id="someone/tip"), StepRecord(Step.HUB_FOLDER, {})
    )

    assert built.rows["relevance"] == {"test": 3}
    loaded = datasets.load_dataset(str(run.hub), "relevance", cache_dir=str(tmp_path / "cache"))
    rows = list(loaded["test"])
    assert [JudgedUnit.from_dict(row) for row in rows] == units
    assert loaded["test"].features["start"].dtype == "int64"
    assert read_qrels(run.hub / "relevance" / "test.qrels.txt") == {
        answerable: {"d0": 1},
        unanswerable: {"d2": 0},
    }
    card = (run.hub / "README.md").read_text()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["questions", "instances", "relevance"]
    assert "`relevance`:" in card
