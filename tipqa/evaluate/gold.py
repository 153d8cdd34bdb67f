"""The gold side of scoring: a built split's labelled questions, from any of the places it lives.

A gold source is one of: a split folder (`outputs/<run>/splits/<split>/`, its rows are
`LabeledQuestion`s in `questions.jsonl`), the splits folder itself or the run's folder
(`outputs/<run>`) with a split name, the Hub-ready folder (`outputs/<run>/hub`, read with
`datasets.load_dataset` as the files it holds now, never through a cached copy) with a split
name, or a Hub dataset id (`owner/name`, its `questions` configuration). The schema version
the split was written with is checked where it is recorded (the splits' stats file, read with
`tipqa.core.stats.read_stats`; the Parquet files' metadata); a different version is an error.
A split folder copied out of its run (no stats file beside it) is read with a warning that its
version is unchecked.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_records
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import SCHEMA_VERSION, Evidence, LabeledQuestion, RecordError
from tipqa.core.stats import read_stats
from tipqa.dataset.splits import SPLIT_LABELS
from tipqa.sources.hf_datasets import load_dataset

log = logging.getLogger(__name__)

HUB_CONFIG = "questions"
CARD_SCHEMA = re.compile(r"record schema (\d+)")
SCHEMA_KEY = "tipqa_schema_version"
REBUILD = (
    "use the tipqa version that built the split, or rebuild it "
    "(luigi --module pipelines MakeSplits --local-scheduler)"
)


@dataclass
class GoldSet:
    """A split's labelled questions, where they came from, and the schema version seen."""

    questions: list[LabeledQuestion]
    source: str
    split: str
    schema_version: int | None

    @property
    def ids(self) -> list[str]:
        """The question ids, in file order."""
        return [question.id for question in self.questions]


def load_gold(
    source: str | os.PathLike[str], split: str = "test", *, cache_dir: str | None = None
) -> GoldSet:
    """The gold questions of `source` (a split folder, splits folder, Hub folder or Hub id).

    `cache_dir` is where `datasets` keeps what it loads (its default cache otherwise).
    """
    path = Path(source)
    if path.is_dir():
        places = ((path.parent, path.name), (path, split), (RunLayout(path).splits, split))
        for splits, name in places:
            layout = SplitsLayout(splits)
            if layout.questions(name).is_file():
                return _split_folder(layout.folder(name), name)
        if (path / HUB_CONFIG).is_dir() and (path / "README.md").is_file():
            return _hub_folder(path, split, cache_dir)
        raise InputError(
            f"not a split folder (no questions.jsonl), nor a splits or run folder with split "
            f"{split!r}, nor a Hub-ready folder (README.md and questions/)",
            path=str(path),
        )
    if path.exists():
        raise InputError("gold must be a folder or a Hub dataset id, not a file", path=str(path))
    if str(source).count("/") != 1 or str(source).startswith((".", "/")):
        raise InputError("no such folder, and not a Hub dataset id (owner/name)", path=str(path))
    return _hub_dataset(str(source), split, cache_dir)


def _split_folder(folder: Path, split: str) -> GoldSet:
    """A split folder; its schema version is checked in the splits' stats file beside it."""
    stats_path = SplitsLayout(folder.parent).stats
    version = None
    if stats_path.is_file():
        version = int(read_stats(stats_path, REBUILD)["schema_version"])
    else:
        log.warning("%s: no splits stats file beside it; schema version not checked", folder)
    path = SplitsLayout(folder.parent).questions(folder.name)
    questions = list(iter_records(path, LabeledQuestion))
    return _checked(GoldSet(questions, str(folder), split, version), str(path))


def _hub_folder(folder: Path, split: str, cache_dir: str | None) -> GoldSet:
    """The Hub-ready folder, through `datasets`; schema version from the Parquet metadata."""
    files = sorted((folder / HUB_CONFIG).glob(f"{split}-*.parquet"))
    if not files:
        known = sorted({p.name.split("-")[0] for p in (folder / HUB_CONFIG).glob("*.parquet")})
        raise InputError(
            f"no split {split!r} (splits here: {', '.join(known) or 'none'})",
            path=str(folder / HUB_CONFIG),
        )
    import pyarrow.parquet as pq

    metadata = pq.read_schema(files[0]).metadata or {}
    raw = metadata.get(SCHEMA_KEY.encode())
    version = _check_version(raw.decode(), str(files[0])) if raw is not None else None
    rows = _load_rows(str(folder), split, cache_dir)
    return _checked(GoldSet(_from_rows(rows, str(folder)), str(folder), split, version), "")


def _hub_dataset(name: str, split: str, cache_dir: str | None = None) -> GoldSet:
    """A dataset on the Hub (or in the local Hugging Face cache when offline).

    `datasets` keeps no Parquet metadata, so the schema version is read from the card, which
    names it as "record schema N"; a card that cannot be had leaves the version unchecked.
    """
    rows = _load_rows(name, split, cache_dir)
    card = _card_text(name)
    found = CARD_SCHEMA.search(card) if card is not None else None
    if found is None:
        log.warning("%s: no schema version on the dataset card; not checked", name)
    version = _check_version(found.group(1), f"{name} (card)") if found else None
    return _checked(GoldSet(_from_rows(rows, name), name, split, version), "")


def _card_text(name: str) -> str | None:
    """The dataset card of a Hub dataset (a local folder's README.md for a path), or None."""
    local = Path(name) / "README.md"
    if local.is_file():
        return local.read_text(encoding="utf-8")
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    try:
        return Path(hf_hub_download(name, "README.md", repo_type="dataset")).read_text("utf-8")
    except (EntryNotFoundError, LocalEntryNotFoundError, OSError) as exc:
        log.warning("%s: dataset card unavailable (%s)", name, exc)
        return None


def _load_rows(name: str, split: str, cache_dir: str | None) -> Any:
    """`datasets.load_dataset(name, "questions", split=split)`, its errors naming the source."""
    try:
        return load_dataset(name, HUB_CONFIG, split=split, cache_dir=cache_dir)
    except (ValueError, FileNotFoundError, ConnectionError) as exc:
        raise InputError(f"cannot load split {split!r}: {exc}", path=name) from exc


def _check_version(raw: Any, where: str) -> int:
    """The recorded schema version as an int; another version than ours is an InputError."""
    try:
        version = int(raw)
    except (TypeError, ValueError) as exc:
        raise InputError(f"unreadable schema version {raw!r}", path=where) from exc
    if version != SCHEMA_VERSION:
        raise InputError(
            f"split written with schema version {version}; this scorer reads version "
            f"{SCHEMA_VERSION} (use the tipqa version that built it, or rebuild the split)",
            path=where,
        )
    return version


def _from_rows(rows: Any, where: str) -> list[LabeledQuestion]:
    """LabeledQuestions from the flat rows of the `questions` configuration."""
    out = []
    for number, row in enumerate(rows, start=1):
        data = dict(row)
        evidence = None
        if data.get("evidence_doc_id") is not None:
            evidence = Evidence(
                data["evidence_stage"],
                data["evidence_doc_id"],
                data["evidence_unit_id"],
                data["evidence_text"],
            )
        for key in ("evidence_stage", "evidence_doc_id", "evidence_unit_id", "evidence_text"):
            data.pop(key, None)
        data["evidence"] = None
        try:
            question = LabeledQuestion.from_dict(data)
        except RecordError as exc:
            raise InputError(f"row {number}: {exc}", path=where) from exc
        question.evidence = evidence
        out.append(question)
    return out


def _checked(gold: GoldSet, path: str) -> GoldSet:
    """Refuse labels outside the splits' two, duplicate ids, missing aliases, an empty split."""
    where = path or gold.source
    seen: set[str] = set()
    for number, question in enumerate(gold.questions, start=1):
        if question.label not in SPLIT_LABELS:
            raise InputError(
                f"question {question.id!r} (row {number}) is labelled {question.label!r}; a "
                f"split holds only {' and '.join(SPLIT_LABELS)} questions",
                path=where,
                field="label",
            )
        if question.id in seen:
            raise InputError(f"duplicate question id {question.id!r} (row {number})", path=where)
        seen.add(question.id)
    if not gold.questions:
        raise InputError(f"split {gold.split!r} has no questions", path=where)
    return gold
