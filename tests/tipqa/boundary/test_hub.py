"""The boundary in the Hub-ready folder and the report: loaded back as users load them."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import yaml
from support.croissant_support import records
from support.partition_fixtures import DEV, TRAIN, build_splits, write_pool

from tipqa.boundary.build import write_boundary
from tipqa.boundary.hub import BoundaryHub, definition, shown_steps, split_shares
from tipqa.boundary.records import FirstSeen
from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import Document, LabeledQuestion
from tipqa.core.stats import read_stats
from tipqa.core.steps import Step
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings
from tipqa.report.build import write_report
from tipqa.training_order.table import TableOrder, TableOrderSettings

STEPS = [0, 50, 100, 150]
CARD = HubSettings(repo_id="someone/tip-demo")
RECORD = StepRecord(Step.HUB_FOLDER, {})


def nothing(ids: list[str]) -> dict[str, Document]:
    return {}


def dated_run(root: Path, *, undated: int | None = None) -> RunLayout:
    """Splits of a dev and a train pool, each pool dated by a table (document d<i> at step
    10 * (i + 1)); document d<undated> is in no training sequence."""
    run = build_splits(root, per_label=3)
    table = root / "order.csv"
    lines = [f"d{i},{10 * (i + 1)}" for i in range(20) if i != undated]
    table.write_text("doc_id,first_step\n" + "\n".join(lines) + "\n", encoding="utf-8")
    order = TableOrder(TableOrderSettings(paths=(str(table),)))
    for pool, counts in (("dev", DEV), ("train", TRAIN)):
        written = write_pool(run, pool, counts)  # the partition build_splits wrote, again
        rows = [row for items in written.values() for row in items]
        evidence = {r.id: [r.evidence] for r in rows if r.evidence is not None}
        out = run.pool(pool).boundary
        write_boundary(rows, evidence, order, nothing, STEPS, out, StepRecord(Step.BOUNDARY, {}))
    return run


def load(folder: Path, config: str, cache: Path) -> datasets.DatasetDict:
    return datasets.load_dataset(str(folder), config, cache_dir=str(cache))


def test_a_configuration_per_checkpoint_and_first_seen(tmp_path: Path) -> None:
    run = dated_run(tmp_path / "run")
    order = {"backend": "table", "paths": [str(tmp_path / "run" / "order.csv")]}
    extension = BoundaryHub(run, STEPS, order, CARD.repo_id)
    folder = build_hub_folder(run, CARD, RECORD, extension)
    hub = run.hub
    meta = yaml.safe_load((hub / "README.md").read_text().split("---\n")[1])
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["questions", "instances", *(f"questions_step{s}" for s in STEPS), "first_seen"]
    cache = tmp_path / "cache"
    ordinary = load(hub, "questions", cache)
    last = load(hub, "questions_step150", cache)
    first = load(hub, "questions_step0", cache)
    for split in ("train", "validation", "test"):
        assert last[split].to_list() == ordinary[split].to_list()
        assert first[split]["id"] == ordinary[split]["id"]
        assert set(first[split]["label"]) == {"unanswerable"}
    middle = load(hub, "questions_step50", cache)["test"]
    late = [r for r in middle if r["label"] == "unanswerable" and r["evidence_doc_id"] is None]
    assert any("first consumed at step" in r["reason"] for r in late)
    seen = load(hub, "first_seen", cache)
    answerable = {s: sum(label == "answerable" for label in ordinary[s]["label"]) for s in seen}
    assert {s: seen[s].num_rows for s in seen} == answerable
    row = seen["test"][0]
    assert row["first_seen_step"] == row["relevant"][0]["step"] > 0
    assert row["exact"] is True and row["relevant"][0]["exact"] is True
    assert row["relevant"][0]["matched"] == "table"
    assert folder.rows["questions_step0"]["test"] == ordinary["test"].num_rows
    card = (hub / "README.md").read_text()
    assert definition().split("\n\n")[1] in card
    assert 'load_dataset("someone/tip-demo", "questions_step150")' in card
    assert "`table` (order.csv)" in card and "0 question(s) of the splits are undetermined" in card


@pytest.mark.needs("mlcroissant")
def test_croissant_json_reads_the_boundary_configurations(tmp_path: Path) -> None:
    import mlcroissant

    run = dated_run(tmp_path / "run")
    order = {"backend": "table", "paths": [str(tmp_path / "run" / "order.csv")]}
    build_hub_folder(run, CARD, RECORD, BoundaryHub(run, STEPS, order, CARD.repo_id))
    dataset = mlcroissant.Dataset(jsonld=run.hub / "croissant.json")
    assert not dataset.metadata.ctx.issues.errors
    cache = tmp_path / "cache"
    for config in ("questions_step50", "first_seen"):
        loaded = load(run.hub, config, cache)
        for split in loaded:
            rows = records(dataset, f"{config}/{split}")
            if config == "first_seen":
                prefix = f"{config}/{split}/relevant/"
                for row in rows:
                    row["relevant"] = [
                        {k.removeprefix(prefix): v for k, v in item.items()}
                        for item in row["relevant"]
                    ]
            assert rows == loaded[split].to_list(), (config, split)


def test_undated_evidence_and_missing_files(tmp_path: Path) -> None:
    run = dated_run(tmp_path / "run", undated=1)
    extension = BoundaryHub(run, STEPS, {"backend": "table"})
    build_hub_folder(run, CARD, RECORD, extension)
    card = (run.hub / "README.md").read_text()
    assert "0 question(s) of the splits are undetermined" not in card
    boundary = run.pool("dev").boundary
    never = {s.question_id for s in read_records(boundary.first_seen, FirstSeen)
             if s.first_seen_step is None}  # fmt: skip
    last = read_records(boundary.checkpoint(STEPS[-1]), LabeledQuestion)
    assert never and never <= {r.id for r in last if r.label == "undetermined"}
    answerable = read_records(run.pool("dev").partition / "answerable.jsonl", LabeledQuestion)
    assert never <= {r.id for r in answerable}  # answerable in the ordinary split
    assert "stay undetermined, so even the last checkpoint's split equals the ordinary" in card
    run.pool("dev").boundary.checkpoint(100).unlink()
    with pytest.raises(InputError, match="no split as of step 100") as info:
        build_hub_folder(run, CARD, RECORD, BoundaryHub(run, STEPS, {"backend": "table"}))
    assert info.value.path == str(run.pool("dev").boundary.checkpoint(100))


def test_split_shares_grow_with_the_step(tmp_path: Path) -> None:
    run = dated_run(tmp_path / "run")
    info = read_stats(SplitsLayout(run.splits).stats, "")["info"]
    shares = split_shares(run, info, STEPS)
    assert list(shares) == ["train", "validation", "test"]
    for entries in shares.values():
        assert [e["step"] for e in entries] == STEPS
        counts = [e["answerable"] for e in entries]
        assert counts == sorted(counts) and counts[0] == 0 and counts[-1] > 0


def test_shown_steps_keep_the_ends() -> None:
    steps = list(range(0, 143_001, 1000))
    shown = shown_steps(steps)
    assert len(shown) == 10 and shown[0] == 0 and shown[-1] == 143_000
    assert shown_steps([5, 1, 3]) == [1, 3, 5]


def test_the_report_shows_the_share_over_training(tmp_path: Path) -> None:
    run = dated_run(tmp_path / "run")
    write_report(run, StepRecord(Step.REPORT, {}), STEPS)
    data = read_json(run.report / "report.json")
    assert set(data["boundary"]) == {"train", "validation", "test"}
    test = data["boundary"]["test"]
    assert test[0]["answerable_share"] == 0.0 and test[-1]["answerable"] == DEV["answerable"]
    markdown = (run.report / "report.md").read_text()
    assert "## Answerable share over training" in markdown and "| step 150 |" in markdown
    assert (run.report / "boundary.png").stat().st_size > 0
    assert read_json(run.report_stats)["counts"]["figures"] == 3
    plain = dated_run(tmp_path / "plain")
    write_report(plain, StepRecord(Step.REPORT, {}))
    assert "boundary" not in read_json(plain.report / "report.json")
    assert not (plain.report / "boundary.png").exists()
