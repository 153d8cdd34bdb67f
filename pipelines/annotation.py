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
from tipqa.annotation.importing import COMPLETED_SUFFIXES
from tipqa.annotation.items import annotator_names
from tipqa.annotation.layout import AnnotationLayout
from tipqa.builder.annotation import annotation_layout, export_pool_annotation, report_agreement
from tipqa.builder.step_inputs import AgreementInputs, AnnotationExportInputs


class AnnotationStep(StepTask):
    """A step of the human annotation of the `[annotation] pool`."""

    def annotation_layout(self) -> AnnotationLayout:
        """The annotation tree of the pool."""
        return annotation_layout(self.plan.annotation_export.annotation, self.layout)


class ExportAnnotation(AnnotationStep):
    """Sample triplets from the pool's partition and write every annotator's files."""

    def requires(self) -> list[luigi.Task]:
        return [Partition(pool=self.inputs().annotation.pool), BuildTokenIndex()]

    def inputs(self) -> AnnotationExportInputs:
        return self.plan.annotation_export

    def stats_path(self) -> Path:
        return self.annotation_layout().stats

    def outputs(self) -> list[Path]:
        return [self.annotation_layout().key, self.annotation_layout().manifest]

    def run(self) -> None:
        export_pool_annotation(self.inputs(), self.layout)


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
        settings = self.plan.annotation_export.annotation
        return [
            CompletedAnnotation(folder=settings.completed_dir, annotator=name)
            for name in annotator_names(settings.annotators)
        ]

    def requires(self) -> dict[str, object]:
        return {"export": ExportAnnotation(), "completed": self.completed()}

    def inputs(self) -> AgreementInputs:
        files = [task.output().path for task in self.completed()]
        return self.plan.annotation_agreement([path for path in files if Path(path).exists()])

    def stats_path(self) -> Path:
        return self.annotation_layout().report_stats

    def outputs(self) -> list[Path]:
        return [self.annotation_layout().report_json, self.annotation_layout().report_markdown]

    def run(self) -> None:
        report_agreement(self.inputs(), self.layout)
