"""Human annotation through a Label Studio server: push the annotators' tasks, pull the labels.

With a Label Studio running (URL in `LABEL_STUDIO_URL` or `[labelstudio] url`, API token in
`LABEL_STUDIO_API_KEY`), `luigi --module pipelines PushAnnotation --local-scheduler` creates
one project per annotator and imports their tasks; `luigi --module pipelines PullAnnotation
--local-scheduler` writes `[annotation] completed_dir`/`<annotator>.json` for
`AnnotationAgreement`. Rerunning either never duplicates projects or tasks (see
`tipqa.annotation.labelstudio`).

The push is a step like the others: complete when its stats file records the export's
fingerprint and the `[labelstudio]` settings that decide the projects (the prefix and the
labelling config's content), and it went to the server asked for now. The pull is not: what
it fetches is people's work, which changes in Label Studio without any file of ours changing,
so, like a dry-run `PublishDataset`, it runs every time it is asked. It rewrites a completed
file only when its content changed, and `AnnotationAgreement` (which knows the completed files
by size and modification time) then runs again.
"""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.annotation import AnnotationStep, ExportAnnotation
from tipqa.annotation.labelstudio import (
    default_prefix,
    pull_annotation,
    push_annotation,
    pushed_to,
)
from tipqa.annotation.labelstudio_server import LabelStudioServer, shown_url
from tipqa.core.fingerprint import StepRecord


class LabelStudioStep(AnnotationStep):
    """A step that talks to the `[labelstudio]` server about the `[annotation] pool`."""

    def project_prefix(self) -> str:
        """`[labelstudio] project_prefix`, or `tipqa <run>/<pool>`."""
        prefix = self.config.labelstudio.project_prefix
        return prefix or default_prefix(self.annotation_layout())


class PushAnnotation(LabelStudioStep):
    """Create each annotator's Label Studio project and import the tasks it lacks."""

    def requires(self) -> luigi.Task:
        return ExportAnnotation()

    def record(self) -> StepRecord:
        return self.plan.annotation_push

    def stats_path(self) -> Path:
        return self.annotation_layout().push_stats

    def complete(self) -> bool:
        url = self.config.labelstudio.server_url()
        pushed = pushed_to(self.annotation_layout())
        return super().complete() and bool(url) and pushed == shown_url(url)

    def run(self) -> None:
        settings = self.config.labelstudio
        push_annotation(
            LabelStudioServer(settings),
            self.annotation_layout(),
            self.project_prefix(),
            settings.label_config_text(),
            self.record(),
        )


class PullAnnotation(LabelStudioStep):
    """Export every annotator's finished project into the completed-annotations folder.

    Never complete: each run fetches the annotators' current work (see the module docstring).
    """

    def requires(self) -> luigi.Task:
        return PushAnnotation()

    def record(self) -> StepRecord:
        return self.plan.annotation_pull

    def stats_path(self) -> Path:
        return self.annotation_layout().pull_stats

    def complete(self) -> bool:
        return False

    def run(self) -> None:
        pull_annotation(
            LabelStudioServer(self.config.labelstudio),
            self.annotation_layout(),
            self.project_prefix(),
            Path(self.config.annotation.completed_dir),
            self.record(),
        )
