"""The judge audit in a build: a fallible build judge whose errors are planted, and a right
second judge (`judge_audit_support`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai_server as fake
import pytest
from judge_audit_support import (
    FALLIBLE_LABELS,
    FALSELY_ANSWERABLE,
    WRONG_PASSAGES,
    planted_config,
    planted_rule,
)
from tests_support import run_luigi

from tipqa.core.jsonl import read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server() -> Iterator[fake.FakeOpenAIServer]:
    with fake.FakeOpenAIServer(planted_rule()) as running:
        yield running


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, server: fake.FakeOpenAIServer) -> Path:
    """A finished build of the planted world by the fallible judge."""
    folder = tmp_path_factory.mktemp("planted")
    result = run_luigi(planted_config(folder, server), "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    return folder


def partition(run: RunLayout) -> dict[str, LabeledQuestion]:
    files = run.pool("dev").partition_files
    return {
        row.id: row
        for label in LABELS
        for row in read_records(files.labelled(label), LabeledQuestion)
    }


def test_the_fallible_judge_makes_the_planted_false_labels(built: Path) -> None:
    rows = partition(RunLayout(built / "outputs" / "t"))
    assert {qid: row.label for qid, row in rows.items()} == FALLIBLE_LABELS
    for qid, stage in FALSELY_ANSWERABLE.items():
        evidence = rows[qid].evidence
        assert rows[qid].stage == stage and evidence is not None
        assert WRONG_PASSAGES[qid] in " ".join(evidence.text.split())
