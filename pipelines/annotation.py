"""Human annotation: export samples for annotators, then the agreement report.

`luigi --module pipelines ExportAnnotation --local-scheduler` writes
`<output_root>/<run>/annotation/<pool>/` (annotators' CSV and Label Studio files, the private
key); once every annotator's completed file is in `[annotation] completed_dir` (by hand, or
pulled from Label Studio: `pipelines.labelstudio`),
`luigi --module pipelines AnnotationAgreement --local-scheduler` writes the report under
`.../annotation/<pool>/agreement/`.
"""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.base import StepTask
from pipelines.indexes import BuildTokenIndex
from pipelines.partition import Partition
from tipqa.annotation.export import export_annotation
from tipqa.annotation.importing import COMPLETED_SUFFIXES
from tipqa.annotation.items import annotator_names
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.report import agreement_report
from tipqa.build.assemble import token_index
from tipqa.core.fingerprint import StepRecord


class AnnotationStep(StepTask):
    """A step of the human annotation of the `[annotation] pool`."""

    def annotation_layout(self) -> AnnotationLayout:
        """The annotation tree of the configured pool."""
        return AnnotationLayout.of(self.layout.root, self.config.annotation.pool)


class ExportAnnotation(AnnotationStep):
    """Sample triplets from the pool's partition and write every annotator's files."""

    def requires(self) -> list[luigi.Task]:
        return [Partition(pool=self.config.annotation.pool), BuildTokenIndex()]

    def record(self) -> StepRecord:
        return self.plan.annotation_export

    def stats_path(self) -> Path:
        return self.annotation_layout().stats

    def run(self) -> None:
        settings = self.config.annotation
        export_annotation(
            self.layout.pool(settings.pool),
            self.annotation_layout(),
            token_index(self.config, self.plan).get,
            settings.sampling(),
            self.record(),
        )


class CompletedAnnotation(luigi.ExternalTask):
    """One annotator's completed file, placed by hand or by PullAnnotation: .csv, .xlsx, .json."""

    folder = luigi.Parameter()
    annotator = luigi.Parameter()

    def output(self) -> luigi.LocalTarget:
        stem = Path(self.folder) / self.annotator
        candidates = [stem.with_suffix(suffix) for suffix in COMPLETED_SUFFIXES]
        found = [path for path in candidates if path.exists()]
        return luigi.LocalTarget(found[0] if found else candidates[0])

    def __repr__(self) -> str:
        stem = Path(self.folder).resolve() / self.annotator
        first, *others = COMPLETED_SUFFIXES
        return f"completed annotation file {stem}{first} (or {', '.join(others)})"


class AnnotationAgreement(AnnotationStep):
    """Import every completed file and write the agreement report (JSON, Markdown, PNG)."""

    def completed(self) -> list[CompletedAnnotation]:
        """Every annotator's completed file."""
        settings = self.config.annotation
        return [
            CompletedAnnotation(folder=settings.completed_dir, annotator=name)
            for name in annotator_names(settings.annotators)
        ]

    def requires(self) -> dict[str, object]:
        return {"export": ExportAnnotation(), "completed": self.completed()}

    def record(self) -> StepRecord:
        files = [task.output().path for task in self.completed()]
        return self.plan.annotation_agreement([path for path in files if Path(path).exists()])

    def stats_path(self) -> Path:
        return self.annotation_layout().report_stats

    def run(self) -> None:
        settings = self.config.annotation
        agreement_report(
            self.annotation_layout(),
            Path(settings.completed_dir),
            settings.bootstrap,
            settings.seed,
            self.record(),
        )
