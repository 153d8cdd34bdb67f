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
from tipqa.annotation.labelstudio import pushed_to
from tipqa.annotation.labelstudio_server import shown_url
from tipqa.builder.labelstudio import pull_projects, push_projects
from tipqa.builder.step_inputs import PullInputs, PushInputs


class PushAnnotation(AnnotationStep):
    """Create each annotator's Label Studio project and import the tasks it lacks.

    Its record says which server holds the projects, which a failed push elsewhere leaves
    true: it is kept, so that pointing back at that server pushes nothing again.
    """

    keeps_last_record = True

    def requires(self) -> luigi.Task:
        return ExportAnnotation()

    def inputs(self) -> PushInputs:
        return self.plan.annotation_push

    def stats_path(self) -> Path:
        return self.annotation_layout().push_stats

    def outputs(self) -> list[Path]:
        return [self.annotation_layout().label_studio_projects]

    def complete(self) -> bool:
        url = self.inputs().labelstudio.server_url()
        pushed = pushed_to(self.annotation_layout())
        return super().complete() and bool(url) and pushed == shown_url(url)

    def run(self) -> None:
        push_projects(self.inputs(), self.layout)


class PullAnnotation(AnnotationStep):
    """Export every annotator's finished project into the completed-annotations folder.

    Never complete: each run fetches the annotators' current work (see the module docstring).
    """

    def requires(self) -> luigi.Task:
        return PushAnnotation()

    def inputs(self) -> PullInputs:
        return self.plan.annotation_pull

    def stats_path(self) -> Path:
        return self.annotation_layout().pull_stats

    def outputs(self) -> list[Path]:
        return []  # never complete: each run pulls again

    def complete(self) -> bool:
        return False

    def run(self) -> None:
        pull_projects(self.inputs(), self.layout)
