"""The Hub-ready folder's task folder: one task per checkpoint, grouped, as lm-eval loads them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from support.partition_fixtures import DEV, TRAIN, build_splits, write_pool

from tipqa.boundary.build import write_boundary
from tipqa.boundary.hub import BoundaryHub
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import RunLayout
from tipqa.core.records import Document
from tipqa.core.steps import Step
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings
from tipqa.lmeval_task.__main__ import run
from tipqa.lmeval_task.task_files import FOLDER, GROUP, TASK, checkpoint_steps
from tipqa.training_order.table import TableOrder, TableOrderSettings

STEPS = [0, 50, 150]
CARD = HubSettings(repo_id="someone/tip-demo")
UNDATED = 2


def nothing(ids: list[str]) -> dict[str, Document]:
    return {}


def dated_hub(root: Path) -> RunLayout:
    """Splits of a dev and a train pool dated by a table (document d<i> read at step
    10 * (i + 1), d<UNDATED> never), and their Hub-ready folder with the checkpoints."""
    run = build_splits(root, per_label=3)
    table = root / "order.csv"
    lines = [f"d{i},{10 * (i + 1)}" for i in range(20) if i != UNDATED]
    table.write_text("doc_id,first_step\n" + "\n".join(lines) + "\n", encoding="utf-8")
    order = TableOrder(TableOrderSettings(paths=(str(table),)))
    for pool, counts in (("dev", DEV), ("train", TRAIN)):
        rows = [row for items in write_pool(run, pool, counts).values() for row in items]
        evidence = {r.id: [r.evidence] for r in rows if r.evidence is not None}
        out = run.pool(pool).boundary
        write_boundary(rows, evidence, order, nothing, STEPS, out, StepRecord(Step.BOUNDARY, {}))
    extension = BoundaryHub(run, STEPS, {"backend": "table"}, CARD.repo_id)
    build_hub_folder(run, CARD, StepRecord(Step.HUB_FOLDER, {}), extension)
    return run


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dated_hub(tmp_path_factory.mktemp("dated") / "run").hub


def test_the_hub_folder_has_a_task_per_checkpoint_and_the_card_says_how(hub: Path) -> None:
    names = sorted(p.name for p in (hub / FOLDER).iterdir())
    steps = [f"{TASK}_step{s}.yaml" for s in STEPS]
    assert names == sorted([f"{TASK}.yaml", f"{GROUP}.yaml", *steps, "utils.py"])
    card = (hub / "README.md").read_text()
    assert f"--tasks {TASK},{GROUP} --include_path tip/{FOLDER}" in card
    assert "hf download someone/tip-demo --repo-type dataset" in card


def test_checkpoint_steps_need_a_test_split() -> None:
    rows = {"questions": {"test": 3}, "questions_step5": {"test": 2}, "questions_step1": {}}
    assert checkpoint_steps({**rows, "first_seen": {"test": 1}}) == [5]


@pytest.mark.needs("lm_eval")
def test_lm_eval_loads_every_task_of_the_folder(
    hub: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(hub / FOLDER), include_defaults=False)
    expected = {TASK, GROUP, *(f"{TASK}_step{s}" for s in STEPS)}
    assert set(manager.all_tasks) == expected
    with caplog.at_level(logging.WARNING, logger="tipqa.lmeval_task.hooks"):
        loaded = manager.load([TASK, GROUP])
    tasks = loaded["tasks"]
    assert loaded["group_map"] == {GROUP: [f"{TASK}_step{s}" for s in STEPS]}
    test_rows = DEV["answerable"] + DEV["unanswerable"]
    assert len(tasks[TASK].test_docs()) == test_rows
    # d2's question is answerable but never read: undetermined at every checkpoint, left out
    for step in STEPS:
        docs = tasks[f"{TASK}_step{step}"].test_docs()
        assert len(docs) == test_rows - 1
        answerable = sum(doc["label"] == "answerable" for doc in docs)
        assert answerable == len([i for i in range(DEV["answerable"]) if i != UNDATED and
                                  10 * (i + 1) <= step])  # fmt: skip
    assert "1 undetermined question(s) left out" in caplog.text


def test_write_command_rewrites_the_folder_of_a_built_hub_folder(hub: Path) -> None:
    (hub / FOLDER / f"{TASK}_step50.yaml").unlink()
    assert run(["write", str(hub)]) == 0
    assert (hub / FOLDER / f"{TASK}_step50.yaml").is_file()
