"""Human annotation of a pool: the annotators' sample exported, then the agreement report."""

from __future__ import annotations

from pathlib import Path

from tipqa.annotation.export import export_annotation
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.report import agreement_report
from tipqa.annotation.settings import AnnotationSettings
from tipqa.builder.assemble import judge_of, token_index
from tipqa.builder.step_inputs import AgreementInputs, AnnotationExportInputs
from tipqa.core.layout import RunLayout
from tipqa.core.stats import StepStats


def annotation_layout(annotation: AnnotationSettings, layout: RunLayout) -> AnnotationLayout:
    """The annotation tree of the `[annotation] pool`."""
    return AnnotationLayout.of(layout.root, annotation.pool)


def export_pool_annotation(inputs: AnnotationExportInputs, layout: RunLayout) -> StepStats:
    """ExportAnnotation: sample the pool's judged triplets, write every annotator's files."""
    annotation = inputs.annotation
    return export_annotation(
        layout.pool(annotation.pool),
        annotation_layout(annotation, layout),
        token_index(inputs.index, layout).get,
        annotation.sampling(),
        inputs.record,
    )


def report_agreement(inputs: AgreementInputs, layout: RunLayout) -> StepStats:
    """AnnotationAgreement: import the completed files, write the agreement report (with
    `[audit.judge]`, that judge's agreement with people beside the build judge's)."""
    annotation = inputs.annotation
    second = None if inputs.audit_judge is None else judge_of(inputs.audit_judge, inputs, layout)
    return agreement_report(
        annotation_layout(annotation, layout),
        Path(annotation.completed_dir),
        annotation.bootstrap,
        annotation.seed,
        inputs.record,
        second,
    )
