"""Human annotation through a Label Studio server: the annotators' tasks pushed, labels pulled."""

from __future__ import annotations

from pathlib import Path

from tipqa.annotation.labelstudio import default_prefix, pull_annotation, push_annotation
from tipqa.annotation.labelstudio_server import LabelStudioServer
from tipqa.builder.annotation import annotation_layout
from tipqa.builder.step_inputs import PullInputs, PushInputs
from tipqa.core.layout import RunLayout
from tipqa.core.stats import StepStats


def project_prefix(inputs: PushInputs, layout: RunLayout) -> str:
    """`[labelstudio] project_prefix`, or `tipqa <run>/<pool>`."""
    prefix = inputs.labelstudio.project_prefix
    return prefix or default_prefix(annotation_layout(inputs.annotation, layout))


def push_projects(inputs: PushInputs, layout: RunLayout) -> StepStats:
    """PushAnnotation: every annotator's project created (or found), its missing tasks added."""
    settings = inputs.labelstudio
    return push_annotation(
        LabelStudioServer(settings),
        annotation_layout(inputs.annotation, layout),
        project_prefix(inputs, layout),
        settings.label_config_text(),
        inputs.record,
    )


def pull_projects(inputs: PullInputs, layout: RunLayout) -> StepStats:
    """PullAnnotation: every annotator's finished project into the completed-files folder."""
    push = inputs.push
    return pull_annotation(
        LabelStudioServer(push.labelstudio),
        annotation_layout(push.annotation, layout),
        project_prefix(push, layout),
        Path(push.annotation.completed_dir),
        inputs.record,
    )
