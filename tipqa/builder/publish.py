"""The benchmark's splits, and the upload of its Hub-ready folder (the folder and the report,
which carry the explorer page, are written a layer up: `tipqa.report.hub_folder`,
`tipqa.report.build`)."""

from __future__ import annotations

from tipqa.builder.step_inputs import HubInputs, SplitsInputs
from tipqa.builder.summary import undetermined_count
from tipqa.core.errors import UndeterminedError
from tipqa.core.layout import RunLayout
from tipqa.core.stats import StepStats
from tipqa.dataset.splits import make_splits
from tipqa.hub.publish import PublishResult, publish, record_path
from tipqa.lmeval_task.task_files import write_task_folder


def write_splits(inputs: SplitsInputs, layout: RunLayout) -> StepStats:
    """MakeSplits: train, validation and test from the pools' partitions, with the
    lm-evaluation-harness task of the test split."""
    return make_splits(layout, inputs.split_plan, inputs.record, evaluation=write_task_folder)


def publish_hub_folder(
    inputs: HubInputs,
    layout: RunLayout,
    pools: list[str],
    repo_id: str,
    *,
    dry_run: bool,
    accept_undetermined: bool,
) -> PublishResult:
    """PublishDataset: upload the Hub-ready folder to `repo_id` (a dry run lists what would go),
    refused while the splits' `pools` have undetermined questions unless they are accepted."""
    undetermined = undetermined_count(layout, pools)
    if undetermined and not (accept_undetermined or dry_run):
        raise UndeterminedError(undetermined, str(layout.summary))
    record = record_path(layout.publish, repo_id, dry_run)
    return publish(layout.hub, inputs.hub, repo_id, dry_run, record)
