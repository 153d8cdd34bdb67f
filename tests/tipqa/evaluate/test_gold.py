"""Loading the gold split from each place it lives, and refusing what is not a split."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_support import labeled, write_split
from partition_fixtures import DEV, build_splits

from tipqa.errors import InputError
from tipqa.evaluate.gold import _hub_dataset, load_gold
from tipqa.hub.folder import build_hub_folder
from tipqa.jsonl import read_json, write_json, write_records
from tipqa.records import SCHEMA_VERSION


def test_split_folder_splits_folder_and_hub_folder_agree(tmp_path: Path) -> None:
    splits = build_splits(tmp_path, per_label=3)
    build_hub_folder(splits, tmp_path / "hub", {"repo_id": "someone/tip"})
    cache = str(tmp_path / "cache")
    by_folder = load_gold(splits / "test")
    by_root = load_gold(splits, "validation")
    by_hub = load_gold(tmp_path / "hub", "test", cache_dir=cache)
    by_id = _hub_dataset(str(tmp_path / "hub"), "test", cache)
    assert len(by_folder.questions) == DEV["answerable"] + DEV["unanswerable"]
    assert by_hub.questions == by_folder.questions
    assert by_id.questions == by_folder.questions
    assert len(by_root.questions) == 6 and by_root.split == "validation"
    assert {g.schema_version for g in (by_folder, by_root, by_hub, by_id)} == {SCHEMA_VERSION}
    assert any(q.evidence is not None for q in by_hub.questions)
    with pytest.raises(
        InputError, match=r"no split 'dev' \(splits here: test, train, validation\)"
    ):
        load_gold(tmp_path / "hub", "dev", cache_dir=cache)


def test_schema_version_is_checked(tmp_path: Path) -> None:
    folder = write_split(tmp_path, [labeled("q1", "answerable", "Paris")])
    stats_path = folder.parent / "stats.json"
    stats = read_json(stats_path)
    assert isinstance(stats, dict)
    stats["schema_version"] = SCHEMA_VERSION + 1
    write_json(stats_path, stats)
    with pytest.raises(
        InputError, match=rf"schema version {SCHEMA_VERSION + 1}; this scorer reads"
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
