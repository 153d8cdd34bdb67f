"""Human annotation: export samples for annotators, then the agreement report.

`luigi --module pipelines ExportAnnotation --local-scheduler` writes
`<output_root>/<run>/annotation/<pool>/` (annotators' CSV and Label Studio files, the private
key); once every annotator's completed file is in `[annotation] completed_dir`,
`luigi --module pipelines AnnotationAgreement --local-scheduler` writes the report under
`.../annotation/<pool>/agreement/`.
"""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.config import Section, build, run_info, token_index
from pipelines.dataset import Partition
from tipqa.annotation.export import export_annotation
from tipqa.annotation.items import annotator_names
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.report import agreement_report
from tipqa.annotation.sampling import SamplingSettings
from tipqa.components import make_token_index


class annotation(Section):
    """[annotation]: the human-annotation sample (section 4.5 of the paper) and its report."""

    pool = luigi.Parameter(default="dev", description="the question pool to sample from")
    triplets = luigi.IntParameter(default=700, description="question-document-answer triplets")
    double = luigi.IntParameter(default=200, description="triplets given to two annotators")
    annotators = luigi.IntParameter(default=10)
    seed = luigi.IntParameter(default=0, description="sampling, assignment and bootstrap seed")
    completed_dir = luigi.Parameter(
        default="annotation/completed",
        description="where <annotator>.csv or <annotator>.json completed files are placed",
    )
    bootstrap = luigi.IntParameter(default=1000, description="bootstrap resamples for the CIs")

    def sampling(self) -> SamplingSettings:
        """The sampling settings of this section."""
        return SamplingSettings(self.triplets, self.double, self.annotators, self.seed)

    def layout(self) -> AnnotationLayout:
        """The annotation tree of the configured pool."""
        return AnnotationLayout.of(build().layout().root, self.pool)


class ExportAnnotation(luigi.Task):
    """Sample triplets from the pool's partition and write every annotator's files."""

    def requires(self) -> luigi.Task:
        return Partition(pool=annotation().pool)

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(annotation().layout().stats)

    def run(self) -> None:
        section = annotation()
        index = make_token_index(token_index().settings(), build().layout().token_index)
        export_annotation(
            build().layout().pool(section.pool),
            section.layout(),
            index.get,
            section.sampling(),
            {"pool": section.pool, **run_info()},
        )


class CompletedAnnotation(luigi.ExternalTask):
    """One annotator's completed file, placed by hand: <folder>/<annotator>.csv or .json."""

    folder = luigi.Parameter()
    annotator = luigi.Parameter()

    def output(self) -> luigi.LocalTarget:
        stem = Path(self.folder) / self.annotator
        found = [p for p in (stem.with_suffix(".csv"), stem.with_suffix(".json")) if p.exists()]
        return luigi.LocalTarget(found[0] if found else stem.with_suffix(".csv"))

    def __repr__(self) -> str:
        stem = Path(self.folder).resolve() / self.annotator
        return f"completed annotation file {stem}.csv (or .json)"


class AnnotationAgreement(luigi.Task):
    """Import every completed file and write the agreement report (JSON, Markdown, PNG)."""

    def requires(self) -> dict[str, object]:
        section = annotation()
        completed = [
            CompletedAnnotation(folder=section.completed_dir, annotator=name)
            for name in annotator_names(section.annotators)
        ]
        return {"export": ExportAnnotation(), "completed": completed}

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(annotation().layout().report_stats)

    def run(self) -> None:
        section = annotation()
        agreement_report(
            section.layout(),
            Path(section.completed_dir),
            section.bootstrap,
            section.seed,
            {"pool": section.pool},
        )
