"""Loading the gold split from each place it lives, and refusing what is not a split."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.evaluate_support import labeled, write_split
from support.partition_fixtures import DEV, build_splits

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, write_json, write_records
from tipqa.core.records import SCHEMA_VERSION
from tipqa.core.steps import Step
from tipqa.evaluate.gold import _hub_dataset, load_gold
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings


def test_split_folder_splits_folder_and_hub_folder_agree(tmp_path: Path) -> None:
    run = build_splits(tmp_path / "run", per_label=3)
    build_hub_folder(run, HubSettings(repo_id="someone/tip"), StepRecord(Step.HUB_FOLDER, {}))
    cache = str(tmp_path / "cache")
    by_folder = load_gold(run.splits / "test")
    by_splits = load_gold(run.splits, "validation")
    by_run = load_gold(run.root, "test")
    by_hub = load_gold(run.hub, "test", cache_dir=cache)
    by_id = _hub_dataset(str(run.hub), "test", cache)
    assert len(by_folder.questions) == DEV["answerable"] + DEV["unanswerable"]
    assert by_hub.questions == by_folder.questions == by_run.questions
    assert by_id.questions == by_folder.questions
    assert len(by_splits.questions) == 6 and by_splits.split == "validation"
    loaded = (by_folder, by_splits, by_run, by_hub, by_id)
    assert {g.schema_version for g in loaded} == {SCHEMA_VERSION}
    assert any(q.evidence is not None for q in by_hub.questions)
    with pytest.raises(
        InputError, match=r"no split 'dev' \(splits here: test, train, validation\)"
    ):
        load_gold(run.hub, "dev", cache_dir=cache)


def test_a_hub_folder_is_read_as_it_holds_now(tmp_path: Path) -> None:
    """Every run's Hub folder is called `hub`: neither another run's nor an earlier build's
    copy in the datasets cache stands in for what the folder holds."""
    cache = str(tmp_path / "cache")
    settings, record = HubSettings(repo_id="someone/tip"), StepRecord(Step.HUB_FOLDER, {})
    first = build_splits(tmp_path / "a", train=False, dev_counts={"unanswerable": 4})
    build_hub_folder(first, settings, record)
    assert load_gold(first.hub, cache_dir=cache).questions == load_gold(first.splits).questions
    other = build_splits(tmp_path / "b", train=False, dev_counts={"answerable": 2})
    build_hub_folder(other, settings, record)
    assert load_gold(other.hub, cache_dir=cache).questions == load_gold(other.splits).questions
    rebuilt = build_splits(tmp_path / "a", train=False, dev_counts={"answerable": 3})
    build_hub_folder(rebuilt, settings, record)
    labels = [q.label for q in load_gold(rebuilt.hub, cache_dir=cache).questions]
    assert labels == ["answerable"] * 3
    questions = next((rebuilt.hub / "questions").glob("test-*.parquet"))
    table = pq.read_table(questions)
    pq.write_table(table.append_column("added", pa.array([1] * table.num_rows)), questions)
    assert len(load_gold(rebuilt.hub, cache_dir=cache).questions) == 3


def test_schema_version_is_checked(tmp_path: Path) -> None:
    folder = write_split(tmp_path, [labeled("q1", "answerable", "Paris")])
    stats_path = folder.parent / "stats.json"
    stats = read_json(stats_path)
    assert isinstance(stats, dict)
    stats["schema_version"] = SCHEMA_VERSION + 1
    write_json(stats_path, stats)
    with pytest.raises(
        InputError, match=rf"schema version {SCHEMA_VERSION + 1}; this tipqa reads .*rebuild it"
    ):
        load_gold(folder)
    stats_path.unlink()
    assert load_gold(folder).schema_version is None


def test_not_a_split(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a split folder"):
        load_gold(tmp_path)
    (tmp_path / "file.jsonl").write_text("")
    with pytest.raises(InputError, match="not a file"):
        load_gold(tmp_path / "file.jsonl")
    with pytest.raises(InputError, match="not a Hub dataset id"):
        load_gold(tmp_path / "absent")


def test_offline_hub_id_names_the_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match=r"someone/absent-dataset: cannot load split 'test'"):
        load_gold("someone/absent-dataset", cache_dir=str(tmp_path / "cache"))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([labeled("q1", "discarded", "Paris")], r"labelled 'discarded'; a split holds only"),
        (
            [labeled("q1", "answerable", "Paris"), labeled("q1", "unanswerable", "Rome")],
            r"duplicate question id 'q1' \(row 2\)",
        ),
        ([], r"split 'test' has no questions"),
    ],
)
def test_bad_gold_rows(tmp_path: Path, rows: list, message: str) -> None:
    folder = write_split(tmp_path, rows)
    with pytest.raises(InputError, match=message):
        load_gold(folder)


def test_a_bad_record_names_the_line(tmp_path: Path) -> None:
    folder = write_split(tmp_path, [labeled("q1", "answerable", "Paris")])
    with open(folder / "questions.jsonl", "a") as handle:
        handle.write('{"id": "q2"}\n')
    with pytest.raises(
        InputError, match=r"questions.jsonl, line 2: LabeledQuestion: missing field"
    ):
        load_gold(folder)
    write_records(folder / "questions.jsonl", [labeled("q1", "answerable", "Paris")])
    assert load_gold(folder).ids == ["q1"]
