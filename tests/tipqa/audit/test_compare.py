"""`tipqa flips`: the labels of two builds of the same questions, and what flipped."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support.partition_fixtures import DEV, write_pool

from tipqa.__main__ import main
from tipqa.audit.compare import compare_runs
from tipqa.core.errors import InputError
from tipqa.core.jsonl import write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, Evidence, LabeledQuestion


def relabel(run: RunLayout, rows: list[LabeledQuestion]) -> None:
    """Write the pool `dev` of `run` with these rows (one file per label)."""
    for label in LABELS:
        write_records(
            run.pool("dev").partition_files.labelled(label), [r for r in rows if r.label == label]
        )


@pytest.fixture
def runs(
    tmp_path: Path,
) -> tuple[RunLayout, RunLayout, list[LabeledQuestion], list[LabeledQuestion]]:
    """Two builds of the same questions; B moves two unanswerable ones and one discarded one."""
    a, b = RunLayout(tmp_path / "a"), RunLayout(tmp_path / "b")
    rows = [row for items in write_pool(a, "dev", DEV).values() for row in items]
    write_pool(b, "dev", DEV)
    evidence = Evidence("vector", "d7", "d7#0", "A fact.")
    moved = {
        rows[9].id: dataclasses.replace(
            rows[9], label="answerable", stage="vector", evidence=evidence
        ),
        rows[10].id: dataclasses.replace(rows[10], label="undetermined", reason="a failure"),
        rows[13].id: dataclasses.replace(rows[13], label="unanswerable", stage="vector"),
    }
    other = [moved.get(row.id, row) for row in rows]
    relabel(b, other)
    return a, b, rows, other


def test_the_matrix_and_the_flips_are_the_labels_counted_pair_by_pair(runs: tuple) -> None:
    a, b, rows, other = runs
    result = compare_runs(a.root, b.root)
    pairs = list(zip(rows, other, strict=True))
    for first in LABELS:
        for second in LABELS:
            expected = sum(x.label == first and y.label == second for x, y in pairs)
            assert result["matrix"][first][second] == expected
    flipped = [(x, y) for x, y in pairs if x.label != y.label]
    assert [flip["id"] for flip in result["flips"]] == [x.id for x, _ in flipped]
    assert sum(result["flips_by_stage"].values()) == len(flipped) == 3
    assert result["flips_by_stage"]["vector -> vector"] == 2
    answered = next(f for f in result["flips"] if f["b"]["label"] == "answerable")
    assert answered["a"]["evidence"] is None and answered["b"]["evidence"]["doc_id"] == "d7"
    assert answered["question"] == rows[9].question and answered["pool"] == "dev"
    assert result["a"]["run"] == str(a.root) and result["questions"] == len(rows)


def test_the_command_writes_json_and_markdown(runs: tuple, capsys: pytest.CaptureFixture) -> None:
    a, b, _, _ = runs
    with pytest.raises(SystemExit) as exited:
        main(["flips", str(a.root), str(b.root)])
    assert exited.value.code == 0
    out = a.flips("b")
    assert json.loads((out / "flips.json").read_text())["flips_by_stage"]
    markdown = (out / "flips.md").read_text()
    assert "| unanswerable | 1 | 2 | 0 | 1 |" in markdown
    assert "3 with another label" in markdown and "`d7` (d7#0)" in markdown
    assert f"{out / 'flips.md'}: 3 of 16 questions flipped" in capsys.readouterr().out


def test_builds_of_other_questions_are_refused(tmp_path: Path, runs: tuple) -> None:
    a, _, rows, _ = runs
    c = RunLayout(tmp_path / "c")
    write_pool(c, "dev", DEV)
    relabel(c, rows[1:])
    with pytest.raises(InputError, match="holds other questions in the two builds"):
        compare_runs(a.root, c.root)
    relabel(c, [dataclasses.replace(rows[0], question="Another?"), *rows[1:]])
    with pytest.raises(InputError, match="has another text in the second build"):
        compare_runs(a.root, c.root)
    with pytest.raises(InputError, match="share no pool"):
        compare_runs(a.root, tmp_path)


@pytest.mark.parametrize("which", ["missing", "other"])
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, runs: tuple, which: str, capsys: pytest.CaptureFixture
) -> None:
    a, _, _, _ = runs
    other = tmp_path / "missing" if which == "missing" else tmp_path / "d"
    if which == "other":
        write_pool(RunLayout(other), "dev", {"answerable": 2})
    with pytest.raises(SystemExit) as exited:
        main(["flips", str(a.root), str(other)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
