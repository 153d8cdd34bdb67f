"""Human annotation through a Label Studio server: push the annotators' tasks, pull the labels.

With a Label Studio running (URL in `LABEL_STUDIO_URL` or `[labelstudio] url`, API token in
`LABEL_STUDIO_API_KEY`), `luigi --module pipelines PushAnnotation --local-scheduler` creates
one project per annotator and imports their tasks; once they are done,
`luigi --module pipelines PullAnnotation --local-scheduler` writes
`[annotation] completed_dir`/`<annotator>.json` for `AnnotationAgreement`. Rerunning either
never duplicates projects or tasks (see `tipqa.annotation.labelstudio`).
"""

from __future__ import annotations

from pathlib import Path

import luigi

from pipelines.annotation import ExportAnnotation, annotation
from tipqa.annotation.labelstudio import (
    default_prefix,
    pull_annotation,
    push_annotation,
    read_label_config,
)
from tipqa.annotation.labelstudio_server import LabelStudioServer, LabelStudioSettings
from tipqa.settings import parse


def labelstudio_settings() -> LabelStudioSettings:  # wiring: lead
    """The `[labelstudio]` section of the Luigi config, read strictly."""
    config = luigi.configuration.get_config()
    raw = dict(config.items("labelstudio")) if config.has_section("labelstudio") else {}
    return parse(LabelStudioSettings, "labelstudio", raw)


def _prefix(settings: LabelStudioSettings) -> str:
    return settings.project_prefix or default_prefix(annotation().layout())


class PushAnnotation(luigi.Task):
    """Create each annotator's Label Studio project and import the tasks it lacks."""

    def requires(self) -> luigi.Task:
        return ExportAnnotation()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(annotation().layout().push_stats)

    def run(self) -> None:
        settings = labelstudio_settings()
        push_annotation(
            LabelStudioServer(settings),
            annotation().layout(),
            _prefix(settings),
            read_label_config(settings.label_config),
            {"pool": annotation().pool, "labelstudio": settings.shown()},
        )


class PullAnnotation(luigi.Task):
    """Export every annotator's finished project into the completed-annotations folder."""

    def requires(self) -> luigi.Task:
        return PushAnnotation()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(annotation().layout().pull_stats)

    def run(self) -> None:
        settings = labelstudio_settings()
        pull_annotation(
            LabelStudioServer(settings),
            annotation().layout(),
            _prefix(settings),
            Path(annotation().completed_dir),
            {"pool": annotation().pool, "labelstudio": settings.shown()},
        )
