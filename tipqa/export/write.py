"""Write a build's splits in an abstention benchmark's format, with a stats file of counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import InputError
from tipqa.core.jsonl import atomic_open, iter_records, write_json
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import LabeledQuestion
from tipqa.core.stats import read_stats
from tipqa.dataset.splits import SPLITS
from tipqa.evaluate.gold import HUB_CONFIG, load_gold
from tipqa.export.formats import ExportFormat

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
        f"neither a run, a splits nor a Hub folder (no splits/stats.json, no README.md and "
        f"questions/): {REMEDY}",
        path=str(source),
    )


def is_hub_folder(source: Path) -> bool:
    """True for a Hub-ready folder, a build's or one downloaded from the Hub (`hf download`)."""
    return (source / HUB_CONFIG).is_dir() and (source / "README.md").is_file()


def split_questions(source: Path) -> tuple[str, dict[str, Iterable[LabeledQuestion]], Any]:
    """The folder read, each split's questions (lazily where they are JSON lines), the pools.

    A Hub folder holds no pool counts (its card states them), so its `pools` is empty.
    """
    source = Path(source)
    if is_hub_folder(source):
        present = [s for s in SPLITS if any((source / HUB_CONFIG).glob(f"{s}-*.parquet"))]
        return str(source), {s: load_gold(source, s).questions for s in present}, {}
    layout, info = splits_of(source)
    present = [s for s in SPLITS if s in info.get("splits", {})]
    questions: dict[str, Iterable[LabeledQuestion]] = {
        s: iter_records(layout.questions(s), LabeledQuestion) for s in present
    }
    return str(layout.root), questions, info.get("pools", {})


def benchmark_name(source: Path) -> str:
    """The name a build's records carry unless told another: the run's (`[build] name`, its
    folder's), or a Hub folder's own when it is no run's (one downloaded from the Hub)."""
    source = Path(source).resolve()
    run = RunLayout(source.parent)
    return source.parent.name if source in (run.splits, run.hub) else source.name


def export_splits(
    source: Path, form: ExportFormat, out: Path, origin: str | None = None
) -> dict[str, Any]:
    """Write every split of `source` in format `form` under `out`; return (and write) counts.

    `origin` is the records' source name (the build's name by default: `benchmark_name`).
    Only answerable and unanswerable questions are in the splits; the pools' discarded and
    undetermined questions are counted under `left_out`, not exported.
    """
    origin = origin or benchmark_name(source)
    root, splits, pools = split_questions(source)
    result: dict[str, Any] = {"format": form.name, "source": root, "splits": {}}
    for split, questions in splits.items():
        counts: Counter[str] = Counter()
        path = out / form.file_name(split)
        with atomic_open(path) as handle:
            if form.json_list:
                handle.write(b"[\n")
            for index, question in enumerate(questions):
                record = orjson.dumps(form.convert(question, split, origin))
                if form.json_list:
                    handle.write((b",\n" if index else b"") + record)
                else:
                    handle.write(record + b"\n")
                counts[question.label] += 1
            if form.json_list:
                handle.write(b"\n]\n")
        result["splits"][split] = {"file": path.name, **dict(sorted(counts.items()))}
    result["left_out"] = {
        name: {label: pool.get(label, 0) for label in ("discarded", "undetermined")}
        for name, pool in pools.items()
        if isinstance(pool, dict)
    }
    write_json(out / "export.stats.json", result)
    return result
