"""Write a build's splits in an abstention benchmark's format, with a stats file of counts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from tipqa.errors import InputError
from tipqa.export.formats import ExportFormat
from tipqa.jsonl import atomic_open, iter_records, write_json
from tipqa.layout import RunLayout, SplitsLayout
from tipqa.records import LabeledQuestion
from tipqa.splits import SPLITS
from tipqa.stats import read_stats

REMEDY = "build the splits first: luigi --module pipelines CreateDataset"


def splits_of(source: Path) -> tuple[SplitsLayout, dict[str, Any]]:
    """The splits folder of a run folder (or a splits folder itself) and its stats' info."""
    source = Path(source)
    for folder in (source, RunLayout(source).splits):
        layout = SplitsLayout(folder)
        if layout.stats.is_file():
            info = read_stats(layout.stats, REMEDY).get("info")
            if not isinstance(info, dict):
                raise InputError("not a split statistics file", path=str(layout.stats))
            return layout, info
    raise InputError(
        f"neither a run nor a splits folder (no splits/stats.json): {REMEDY}", path=str(source)
    )


def export_splits(
    source: Path, form: ExportFormat, out: Path, origin: str = "TIP-TriviaQA"
) -> dict[str, Any]:
    """Write every split of `source` in format `form` under `out`; return (and write) counts.

    Only answerable and unanswerable questions are in the splits; the pools' discarded and
    undetermined questions are counted under `left_out`, not exported.
    """
    layout, info = splits_of(source)
    present = [s for s in SPLITS if s in info.get("splits", {})]
    result: dict[str, Any] = {"format": form.name, "source": str(layout.root), "splits": {}}
    for split in present:
        counts: Counter[str] = Counter()
        path = out / form.file_name(split)
        with atomic_open(path) as handle:
            if form.json_list:
                handle.write(b"[\n")
            for index, question in enumerate(
                iter_records(layout.questions(split), LabeledQuestion)
            ):
                record = orjson.dumps(form.convert(question, split, origin))
                if form.json_list:
                    handle.write((b",\n" if index else b"") + record)
                else:
                    handle.write(record + b"\n")
                counts[question.label] += 1
            if form.json_list:
                handle.write(b"\n]\n")
        result["splits"][split] = {"file": path.name, **dict(sorted(counts.items()))}
    pools = info.get("pools", {})
    result["left_out"] = {
        name: {label: pool.get(label, 0) for label in ("discarded", "undetermined")}
        for name, pool in pools.items()
        if isinstance(pool, dict)
    }
    write_json(out / "export.stats.json", result)
    return result
