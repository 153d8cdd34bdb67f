"""Where the annotation files of one pool live: `<run>/annotation/<pool>/...`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AnnotationLayout:
    """The annotation tree of one pool (exports, private key, agreement report)."""

    root: Path

    @classmethod
    def of(cls, run_root: str | Path, pool: str) -> AnnotationLayout:
        """The annotation tree of pool `pool` of the run at `run_root`."""
        return cls(Path(run_root) / "annotation" / pool)

    @property
    def key(self) -> Path:
        """The private key: every item with the judge's label (never given to annotators)."""
        return self.root / "key.jsonl"

    @property
    def manifest(self) -> Path:
        """Sampling settings, counts per stratum, and every annotator's items."""
        return self.root / "manifest.json"

    @property
    def stats(self) -> Path:
        """The export's stats file, written last: its presence marks the export finished."""
        return self.root / "export.stats.json"

    def csv(self, annotator: str) -> Path:
        """The spreadsheet an annotator fills in."""
        return self.root / "csv" / f"{annotator}.csv"

    def label_studio(self, annotator: str) -> Path:
        """The Label Studio tasks of one annotator (one project per annotator)."""
        return self.root / "label-studio" / f"{annotator}.json"

    @property
    def label_studio_projects(self) -> Path:
        """Which Label Studio project holds each annotator's tasks (written by the push)."""
        return self.root / "label-studio" / "projects.json"

    @property
    def push_stats(self) -> Path:
        """The push's stats file, written last."""
        return self.root / "label-studio" / "push.stats.json"

    def pulled(self, annotator: str) -> Path:
        """The raw JSON export of an annotator's project, as last pulled from Label Studio."""
        return self.root / "label-studio" / "pulled" / f"{annotator}.json"

    @property
    def pull_stats(self) -> Path:
        """The pull's stats file, written last (only once every annotator's file is complete)."""
        return self.root / "label-studio" / "pull.stats.json"

    @property
    def report(self) -> Path:
        """The folder of the agreement report."""
        return self.root / "agreement"

    @property
    def report_json(self) -> Path:
        """The agreement statistics as JSON."""
        return self.report / "agreement.json"

    @property
    def report_markdown(self) -> Path:
        """The agreement statistics as Markdown."""
        return self.report / "agreement.md"

    @property
    def report_stats(self) -> Path:
        """The agreement step's stats file, written last."""
        return self.report / "agreement.stats.json"
