"""Recall@k of a TREC run file against the qrels of a build."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tipqa.core.errors import InputError
from tipqa.dataset.qrels import read_qrels
from tipqa.evaluate.__main__ import run
from tipqa.evaluate.retrieval import read_run, recall_at_k, write_run

QRELS = "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\nq3 0 d5 0\nq4 0 d6 1\nq4 0 d7 1\nq4 0 d8 1\n"
# q1: d2 at rank 1, d1 at rank 4; q2: d4 at rank 2; q3 has no relevant document (not counted);
# q4 is not in the run (recall 0); q9 is not in the qrels (ignored).
RUN = """\
q1 Q0 d9 3 7.0 bm25
q1 Q0 d2 1 9.5 bm25
q1 Q0 d3 2 8.0 bm25
q1 Q0 d1 4 1.0 bm25
q2 Q0 d0 1 2.0 bm25
q2 Q0 d4 2 1.5 bm25
q2 Q0 d0 3 0.5 bm25
q3 Q0 d5 1 1.0 bm25
q9 Q0 d1 1 1.0 bm25
"""


def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def test_a_run_is_ranked_by_score_and_round_trips(tmp_path: Path) -> None:
    _, path = files(tmp_path)
    counts: Counter[str] = Counter()
    ranked = read_run(path, counts)
    assert ranked == {
        "q1": ["d2", "d3", "d9", "d1"],
        "q2": ["d0", "d4"],
        "q3": ["d5"],
        "q9": ["d1"],
    }
    assert counts["duplicate_documents"] == 1
    write_run(tmp_path / "again.txt", ranked)
    assert read_run(tmp_path / "again.txt") == ranked


def test_recall_at_k_equals_the_hand_computed_values(tmp_path: Path) -> None:
    qrels, path = files(tmp_path)
    result = recall_at_k(read_qrels(qrels), read_run(path), [1, 2, 4])
    # @1: q1 1/2, q2 0, q4 0 -> 1/6; @2: q1 1/2, q2 1, q4 0 -> 1/2; @4: 1, 1, 0 -> 2/3.
    assert result["recall"] == pytest.approx({"@1": 1 / 6, "@2": 1 / 2, "@4": 2 / 3})
    assert result["questions"] == 3
    assert result["questions_without_relevant"] == 1
    assert result["questions_not_in_run"] == 1
    assert result["run_questions_not_in_qrels"] == 1
    assert result["relevant_documents"] == 6


def test_the_recall_command_prints_and_writes_the_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, path = files(tmp_path)
    out = tmp_path / "recall.json"
    argv = ["recall", "--run", str(path), "--qrels", str(qrels), "--k", "2", "--out", str(out)]
    assert run(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["recall"]["@2"] == pytest.approx(0.5)
    assert printed["run_duplicate_documents"] == 1


@pytest.mark.parametrize(
    ("line", "match"),
    [("q1 Q0 d1 1 0.5\n", "6 fields"), ("q1 Q0 d1 first 0.5 x\n", "rank 'first' is not a number")],
)
def test_a_bad_run_line_names_file_and_line(tmp_path: Path, line: str, match: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q0 Q0 d0 1 1.0 x\n" + line)
    with pytest.raises(InputError, match=match) as info:
        read_run(path)
    assert info.value.line == 2


def test_k_must_be_positive() -> None:
    with pytest.raises(InputError, match="positive"):
        recall_at_k({}, {}, [0])
