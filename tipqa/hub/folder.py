"""The Hub-ready folder: Parquet files per configuration and split, and the dataset card.

Layout: `README.md` (the card, whose YAML declares the configurations), `croissant.json` (the
Croissant metadata with the Responsible-AI fields, `tipqa.hub.croissant`), and for each
configuration `<config>/<split>-NNNNN-of-MMMMM.parquet`, and with `[hub] explorer` the explorer page
(`explorer/index.html`, see `tipqa.report.explorer.write`). A split with no rows is left out of its
configuration (`datasets` cannot load an empty split), and a configuration with no rows at all
is left out of the folder; the card says so. The folder is built next to its place and moved
there whole, so a failure never leaves half a folder; its stats go next to it
(`<folder>.stats.json`), outside what is published.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from tqdm import tqdm

from tipqa.audit.markdown import trust_section
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import iter_records, read_json, write_json
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import SCHEMA_VERSION, JudgedUnit, LabeledQuestion, VectorInstance
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.dataset.partition import question_row
from tipqa.dataset.provenance import REMEDY
from tipqa.dataset.qrels import QRELS_FILE, UNITS_FILE
from tipqa.dataset.splits import SPLITS, read_audit
from tipqa.hub.card import render_card
from tipqa.hub.croissant import CROISSANT_FILE, croissant
from tipqa.hub.folder_stats import HubFolderStats
from tipqa.hub.rai import Measured
from tipqa.hub.settings import HubSettings
from tipqa.lmeval_task.task_files import card_section as lm_eval_section
from tipqa.lmeval_task.task_files import checkpoint_steps, write_task_folder

BATCH_ROWS = 1000
CONFIGS: tuple[str, ...] = ("questions", "instances", "relevance")


def question_schema() -> Any:
    """Arrow schema of the `questions` configuration (evidence flattened into columns)."""
    import pyarrow as pa

    string = pa.string()
    return pa.schema(
        [
            ("id", string),
            ("question", string),
            ("answer", string),
            ("aliases", pa.list_(string)),
            ("label", string),
            ("stage", string),
            ("reason", string),
            ("keywords", pa.list_(string)),
            ("total_matches", pa.int64()),
            ("verbatim_docs", pa.int64()),
            ("verbatim_with_alias", pa.int64()),
            ("evidence_stage", string),
            ("evidence_doc_id", string),
            ("evidence_unit_id", string),
            ("evidence_text", string),
        ],
        metadata={"tipqa_schema_version": str(SCHEMA_VERSION)},
    )


def instance_schema() -> Any:
    """Arrow schema of the `instances` configuration: the (q, a, d, r) instances."""
    import pyarrow as pa

    string = pa.string()
    return pa.schema(
        [
            ("question_id", string),
            ("question", string),
            ("answer", string),
            ("doc_id", string),
            ("chunk_id", string),
            ("text", string),
            ("score", pa.float64()),
            ("relevant", pa.bool_()),
        ],
        metadata={"tipqa_schema_version": str(SCHEMA_VERSION)},
    )


def relevance_schema() -> Any:
    """Arrow schema of the `relevance` configuration: every judged window or chunk."""
    import pyarrow as pa

    string = pa.string()
    return pa.schema(
        [
            ("question_id", string),
            ("stage", string),
            ("doc_id", string),
            ("unit_id", string),
            ("relevance", pa.int64()),
            ("p_yes", pa.float64()),
            ("judge", string),
            ("start", pa.int64()),
            ("end", pa.int64()),
        ],
        metadata={"tipqa_schema_version": str(SCHEMA_VERSION)},
    )


class HubConfig(Protocol):
    """One configuration of the folder: its name, Arrow schema, and rows per split."""

    @property
    def name(self) -> str:
        """The configuration's name (its folder)."""
        ...

    @property
    def schema(self) -> Any:
        """Its Arrow schema."""
        ...

    def count(self, splits: SplitsLayout, split: str) -> int:
        """How many rows `split` has (0: the split is left out)."""
        ...

    def rows(self, splits: SplitsLayout, split: str) -> Iterator[dict[str, Any]]:
        """The rows of `split`, exactly `count` of them."""
        ...


@dataclass(frozen=True)
class ConfigSpec:
    """How one configuration is made from the splits folder."""

    name: str
    schema: Any

    def source(self, splits: SplitsLayout, split: str) -> Path:
        """The JSONL file of `split` that this configuration reads."""
        if self.name == "relevance":
            return splits.root / split / UNITS_FILE
        return splits.questions(split) if self.name == "questions" else splits.instances(split)

    def count(self, splits: SplitsLayout, split: str) -> int:
        """The lines of the split's JSONL file (0 for relevance files a build lacks)."""
        path = self.source(splits, split)
        if self.name == "relevance" and not path.is_file():
            return 0
        return count_lines(path)

    def rows(self, splits: SplitsLayout, split: str) -> Iterator[dict[str, Any]]:
        """The configuration's rows from its JSONL file."""
        path = self.source(splits, split)
        if self.name == "questions":
            for question in iter_records(path, LabeledQuestion):
                yield question_row(question)
        elif self.name == "relevance":
            for unit in iter_records(path, JudgedUnit):
                yield unit.to_dict()
        else:
            for instance in iter_records(path, VectorInstance):
                yield instance.to_dict()


def config_specs() -> list[ConfigSpec]:
    """The configurations of the folder, in card order (the first is the default)."""
    return [
        ConfigSpec("questions", question_schema()),
        ConfigSpec("instances", instance_schema()),
        ConfigSpec("relevance", relevance_schema()),
    ]


class FolderExtension(Protocol):
    """More configurations of the folder (after the ordinary ones) and their card sections."""

    def configs(self, info: dict[str, Any]) -> list[HubConfig]:
        """The configurations, given the splits' statistics (`info` of its stats file)."""
        ...

    def card_sections(self, info: dict[str, Any], rows: dict[str, dict[str, int]]) -> list[str]:
        """What the card says of them (Markdown sections)."""
        ...


def count_lines(path: Path) -> int:
    """The non-empty lines of a file."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def write_parquet_split(
    spec: HubConfig, splits: SplitsLayout, folder: Path, split: str, rows_per_file: int
) -> list[tuple[str, int]]:
    """Write a split as `split-NNNNN-of-MMMMM.parquet` files; return (file name, rows) pairs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    total = spec.count(splits, split)
    if total == 0:
        return []
    files = -(-total // rows_per_file)
    folder.mkdir(parents=True, exist_ok=True)
    rows = spec.rows(splits, split)
    written = []
    for index in range(files):
        name = f"{split}-{index:05d}-of-{files:05d}.parquet"
        count = min(rows_per_file, total - index * rows_per_file)
        with pq.ParquetWriter(folder / name, spec.schema, compression="zstd") as writer:
            for start in range(0, count, BATCH_ROWS):
                batch = list(itertools.islice(rows, min(BATCH_ROWS, count - start)))
                writer.write_table(pa.Table.from_pylist(batch, schema=spec.schema))
        written.append((name, count))
    return written


def write_data_files(
    splits: SplitsLayout,
    out: Path,
    available: list[str],
    rows_per_file: int,
    extra: Sequence[HubConfig] = (),
) -> HubFolderStats:
    """Write every configuration's Parquet files under `out` (the `extra` ones last)."""
    rows: dict[str, dict[str, int]] = {}
    files: dict[str, dict[str, list[str]]] = {}
    specs: list[HubConfig] = [*config_specs(), *extra]
    for spec in specs:
        for split in tqdm(available, desc=f"parquet {spec.name}", leave=False):
            written = write_parquet_split(spec, splits, out / spec.name, split, rows_per_file)
            if written:
                rows.setdefault(spec.name, {})[split] = sum(count for _, count in written)
                files.setdefault(spec.name, {})[split] = [f"{spec.name}/{n}" for n, _ in written]
    return HubFolderStats(rows, files)


def copy_qrels(splits: SplitsLayout, out: Path, folder: HubFolderStats) -> None:
    """Put each split's TREC qrels beside its `relevance` Parquet files
    (`relevance/<split>.qrels.txt`)."""
    for split in folder.rows.get("relevance", {}):
        source = splits.root / split / QRELS_FILE
        if source.is_file():
            shutil.copyfile(source, out / "relevance" / f"{split}.qrels.txt")


@dataclass(frozen=True)
class TrustFiles:
    """What the card and `croissant.json` say of how far the labels can be trusted: the audits
    of these pools (each by the fingerprint it must record), the judge's agreement with people
    (its report)."""

    audits: Mapping[str, str] = field(default_factory=dict)
    agreement: Path | None = None

    def measured(self, run: RunLayout) -> Measured:
        """The audits and the agreement report, read back."""
        audits = {pool: read_audit(run.pool(pool), fp) for pool, fp in self.audits.items()}
        agreement = read_json(self.agreement) if self.agreement is not None else None
        return Measured(audits, cast(dict[str, Any] | None, agreement))


def build_hub_folder(
    run: RunLayout,
    settings: HubSettings,
    record: StepRecord,
    extension: FolderExtension | None = None,
    explorer: Callable[[Path], int] | None = None,
    trust: TrustFiles | None = None,
) -> HubFolderStats:
    """Build the run's Hub-ready folder from its splits; the card says what [hub] asks.

    An `extension` adds configurations and card sections (the boundary over training time);
    `explorer` writes the explorer page into the folder it is given (with `[hub] explorer`) and
    returns how many questions it shows; `trust` names the audits and agreement report the card
    and `croissant.json` show.
    """
    layout = SplitsLayout(run.splits)
    stats = read_stats(layout.stats, REMEDY)
    if not isinstance(stats.get("info"), dict):
        raise InputError("not a split statistics file", path=str(layout.stats))
    available = [s for s in SPLITS if s in stats["info"].get("splits", {})]
    rows_per_file = settings.rows_per_file
    out = run.hub
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    step = StepStats(Step.HUB_FOLDER, provenance=record.provenance())
    extra = extension.configs(stats["info"]) if extension is not None else []
    folder = write_data_files(layout, staging, available, rows_per_file, extra)
    copy_qrels(layout, staging, folder)
    sections = extension.card_sections(stats["info"], folder.rows) if extension else []
    measured = (trust or TrustFiles()).measured(run)
    verbatim = stats["info"].get("verbatim")
    trusted = trust_section(dict(measured.audits), verbatim, measured.agreement)
    sections = [trusted, *sections] if trusted else sections
    if folder.rows.get("questions", {}).get("test"):
        steps = checkpoint_steps(folder.rows)
        write_task_folder(staging, steps)
        sections = [*sections, lm_eval_section(steps, settings.repo_id)]
    card = render_card(stats, folder, settings.card(), sections)
    (staging / "README.md").write_text(card, encoding="utf-8")
    version = f"{stats['info']['parameters'].get('tipqa_version')}+{record.fingerprint[:12]}"
    metadata = croissant(staging, folder, stats["info"], settings.card(), version, measured)
    write_json(staging / CROISSANT_FILE, metadata)
    if settings.explorer:
        if explorer is None:
            raise ConfigError("[hub] explorer = true, but no explorer page writer was given")
        step.add("explorer.questions", explorer(staging / "explorer"))
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    for config, splits in folder.rows.items():
        for split, count in splits.items():
            step.add(f"{config}.{split}", count)
    step.info["files"] = folder.files
    step.write(run.hub_stats)
    return folder
