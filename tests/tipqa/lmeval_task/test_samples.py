"""lm-eval's logged samples as a predictions file, and the command line that writes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.evaluate_support import write_lines

from tipqa.core.errors import InputError, TipqaError
from tipqa.evaluate.predictions import iter_prediction_lines
from tipqa.lmeval_task.__main__ import run
from tipqa.lmeval_task.samples import samples_to_predictions


def sample(qid: str, text: str) -> dict:
    return {"doc_id": 0, "doc": {"id": qid}, "resps": [[text + " "]], "filtered_resps": [text]}


def test_the_filtered_response_of_every_sample(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", [sample("q1", "Paris"), sample("q2", ""), ""])
    out = tmp_path / "p.jsonl"
    assert run(["predictions", str(path), str(out)]) == 0
    got = [(p.id, p.prediction) for _, p in iter_prediction_lines(out)]
    assert got == [("q1", "Paris"), ("q2", "")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: invalid JSON"),
        ({"doc": {"question": "?"}, "filtered_resps": ["x"]}, "not a sample of a tipqa task"),
        ({"doc": {"id": "q2"}, "filtered_resps": [None]}, "expected a generated text"),
        (sample("q1", "again"), "duplicate id 'q1' (first on line 1)"),
    ],
)
def test_bad_samples_name_the_line(tmp_path: Path, line: object, message: str) -> None:
    path = write_lines(tmp_path / "s.jsonl", [sample("q1", "Paris"), line])
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        samples_to_predictions(path, tmp_path / "p.jsonl")
    assert not (tmp_path / "p.jsonl").exists()


def test_a_missing_file_and_a_folder_that_was_not_built(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such samples file"):
        samples_to_predictions(tmp_path / "none.jsonl", tmp_path / "p.jsonl")
    with pytest.raises(TipqaError, match="neither a splits folder nor a Hub-ready folder"):
        run(["write", str(tmp_path)])
