"""`python -m tipqa.export`: the demo splits in SelfAware, KUQ, UA-Bench and AbstentionBench form.

The expected records are written from each format's documented fields (see the formats'
notes in `tipqa.export.formats`), for one answerable and one unanswerable question of the
authored demo splits (`partition_fixtures`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.partition_fixtures import DEV, TRAIN, build_splits

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.layout import RunLayout
from tipqa.core.steps import Step
from tipqa.evaluate.uabench import read_targets
from tipqa.export.__main__ import run
from tipqa.export.formats import FORMATS
from tipqa.export.write import export_splits
from tipqa.hub.folder import build_hub_folder
from tipqa.hub.settings import HubSettings

ANSWERABLE, UNANSWERABLE = "dev-ans-000", "dev-una-001"

EXPECTED: dict[str, dict[str, dict[str, Any]]] = {
    "selfaware": {
        ANSWERABLE: {
            "question_id": ANSWERABLE,
            "question": "Question 0 of dev?",
            "answer": ["Answer 0", "A0"],
            "answerable": True,
            "source": "TIP-TriviaQA",
        },
        UNANSWERABLE: {
            "question_id": UNANSWERABLE,
            "question": "Question 1 of dev?",
            "answer": None,
            "answerable": False,
            "source": "TIP-TriviaQA",
        },
    },
    "kuq": {
        ANSWERABLE: {
            "question": "Question 0 of dev?",
            "answer": "Answer 0",
            "unknown": False,
            "category": None,
            "source": "TIP-TriviaQA",
        },
        UNANSWERABLE: {
            "question": "Question 1 of dev?",
            "answer": None,
            "unknown": True,
            "category": "knowledge absent from pretraining data",
            "source": "TIP-TriviaQA",
        },
    },
    "ua-bench": {
        ANSWERABLE: {
            "id": ANSWERABLE,
            "question": "Question 0 of dev?",
            "answers": ["Answer 0", "A0"],
            "label": "ANSWERABLE",
            "uncertainty": None,
            "source": "TIP-TriviaQA",
        },
        UNANSWERABLE: {
            "id": UNANSWERABLE,
            "question": "Question 1 of dev?",
            "answers": ["Answer 1", "A1"],
            "label": "ABSTAIN",
            "uncertainty": "MODEL_UNCERTAIN",
            "source": "TIP-TriviaQA",
        },
    },
    "abstentionbench": {
        ANSWERABLE: {
            "question": "Question 0 of dev?",
            "reference_answers": ["Answer 0", "A0"],
            "should_abstain": False,
            "metadata": {
                "id": ANSWERABLE,
                "split": "test",
                "source": "TIP-TriviaQA",
                "stage": "vector",
                "abstention_reason": None,
            },
        },
        UNANSWERABLE: {
            "question": "Question 1 of dev?",
            "reference_answers": None,
            "should_abstain": True,
            "metadata": {
                "id": UNANSWERABLE,
                "split": "test",
                "source": "TIP-TriviaQA",
                "stage": "vector",
                "abstention_reason": "MODEL_UNCERTAIN",
            },
        },
    },
}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The authored demo splits: test from dev, train and validation from train."""
    return build_splits(tmp_path_factory.mktemp("export") / "run").root


def records(path: Path) -> list[dict[str, Any]]:
    """The records of an exported file: a JSON list, or JSON lines."""
    if path.suffix == ".json":
        loaded = json.loads(path.read_text())
        assert isinstance(loaded, list)
        return loaded
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def key(name: str, record: dict[str, Any]) -> Any:
    """What identifies a record of format `name` (KUQ keeps no id: its question and label)."""
    if name == "kuq":
        return (record["question"], record["unknown"])
    if name == "abstentionbench":
        return record["metadata"]["id"]
    return record["question_id" if name == "selfaware" else "id"]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_field_by_field(demo_run: Path, tmp_path: Path, name: str) -> None:
    result = export_splits(demo_run, FORMATS[name], tmp_path, "TIP-TriviaQA")
    test = records(tmp_path / result["splits"]["test"]["file"])
    assert len(test) == DEV["answerable"] + DEV["unanswerable"]
    found = {key(name, r): r for r in test}
    assert len(found) == len(test)
    for expected in EXPECTED[name].values():
        assert found[key(name, expected)] == expected
    assert all(set(r) == set(next(iter(EXPECTED[name].values()))) for r in test)


def test_every_split_is_exported_and_what_is_left_out_is_counted(
    demo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([str(demo_run), "--format", "abstentionbench", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "export.stats.json").read_text())
    assert printed["splits"]["test"] == {
        "file": "test.jsonl",
        "answerable": DEV["answerable"],
        "unanswerable": DEV["unanswerable"],
    }
    exported = sum(len(records(tmp_path / f"{s}.jsonl")) for s in ("train", "validation", "test"))
    kept = sum(c[label] for c in (DEV, TRAIN) for label in ("answerable", "unanswerable"))
    assert exported == kept
    assert printed["left_out"] == {
        "dev": {"discarded": DEV["discarded"], "undetermined": DEV["undetermined"]},
        "train": {"discarded": TRAIN["discarded"], "undetermined": TRAIN["undetermined"]},
    }
    validation = records(tmp_path / "validation.jsonl")
    assert {r["metadata"]["split"] for r in validation} == {"validation"}


def test_selfaware_is_one_json_list_per_split(demo_run: Path, tmp_path: Path) -> None:
    assert run([str(demo_run / "splits"), "--format", "selfaware", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "export.stats.json", "test.json", "train.json", "validation.json",
    ]  # fmt: skip
    assert json.loads((tmp_path / "test.json").read_text())[0]["question_id"] == ANSWERABLE


def test_the_records_carry_the_build_s_name_unless_told(demo_run: Path, tmp_path: Path) -> None:
    for source in (demo_run, demo_run / "splits"):
        result = export_splits(source, FORMATS["kuq"], tmp_path)
        assert {r["source"] for r in records(tmp_path / result["splits"]["test"]["file"])} == {
            demo_run.name
        }


def test_a_folder_without_splits_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="neither a run, a splits nor a Hub folder"):
        export_splits(tmp_path, FORMATS["kuq"], tmp_path / "out")


def test_the_ua_bench_records_read_back_as_model_uncertain_targets(
    demo_run: Path, tmp_path: Path
) -> None:
    result = export_splits(demo_run, FORMATS["ua-bench"], tmp_path)
    targets = {t.id: t.target for t in read_targets(tmp_path / result["splits"]["test"]["file"])}
    assert targets[ANSWERABLE] == "ANSWER" and targets[UNANSWERABLE] == "MODEL_UNCERTAIN"
    assert set(targets.values()) == {"ANSWER", "MODEL_UNCERTAIN"}


def test_a_hub_folder_is_exported_as_its_splits(demo_run: Path, tmp_path: Path) -> None:
    run_layout = RunLayout(demo_run)
    build_hub_folder(
        run_layout, HubSettings(repo_id="someone/tip"), StepRecord(Step.HUB_FOLDER, {})
    )
    downloaded = tmp_path / "tip"
    shutil.copytree(run_layout.hub, downloaded)
    assert export_splits(run_layout.hub, FORMATS["kuq"], tmp_path / "own")["splits"]
    assert {r["source"] for r in records(tmp_path / "own" / "test.jsonl")} == {demo_run.name}
    from_hub = export_splits(downloaded, FORMATS["kuq"], tmp_path / "hub", "TIP-demo")
    from_run = export_splits(demo_run, FORMATS["kuq"], tmp_path / "run", "TIP-demo")
    assert from_hub["splits"] == from_run["splits"]
    for split in ("train", "validation", "test"):
        hub_rows = records(tmp_path / "hub" / f"{split}.jsonl")
        assert sorted(map(str, hub_rows)) == sorted(
            map(str, records(tmp_path / "run" / f"{split}.jsonl"))
        )
    assert from_hub["left_out"] == {}
