"""lm-eval's logged samples (`--log_samples`) as a predictions file of `python -m tipqa.evaluate`.

Each line of a `samples_<task>_<time>.jsonl` file holds the document (`doc`, with the question
`id`) and the answers after lm-eval's filters (`filtered_resps`, the one the metrics read).
A line without them, an id given twice, or a file of another task than a tipqa one is an error
naming the file and the line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_json_lines
from tipqa.evaluate.predictions import Prediction, write_predictions


def _response(sample: dict[str, Any], path: str, line: int) -> str:
    """The filtered response of one sample."""
    filtered = sample.get("filtered_resps")
    if isinstance(filtered, list) and filtered:
        filtered = filtered[0]
    if isinstance(filtered, list) and filtered:
        filtered = filtered[0]
    if not isinstance(filtered, str):
        raise InputError(
            f"expected a generated text, got {filtered!r}",
            path=path,
            line=line,
            field="filtered_resps",
        )
    return filtered


def iter_sample_predictions(path: str | os.PathLike[str]) -> Iterator[Prediction]:
    """One prediction per sample line, in file order; a bad line raises InputError."""
    name = str(path)
    seen: dict[str, int] = {}
    for number, sample in iter_json_lines(path):
        doc = sample.get("doc") if isinstance(sample, dict) else None
        if (
            not isinstance(sample, dict)
            or not isinstance(doc, dict)
            or not isinstance(doc.get("id"), str)
        ):
            raise InputError(
                "no document with a question id: not a sample of a tipqa task",
                path=name,
                line=number,
                field="doc",
            )
        qid = doc["id"]
        if qid in seen:
            raise InputError(
                f"duplicate id {qid!r} (first on line {seen[qid]})", path=name, line=number
            )
        seen[qid] = number
        yield Prediction(qid, _response(sample, name, number))


def samples_to_predictions(samples: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """Write the predictions of an lm-eval samples file to `out`; return how many."""
    if not os.path.isfile(samples):
        raise InputError("no such samples file", path=str(samples))
    return write_predictions(out, list(iter_sample_predictions(samples)))
