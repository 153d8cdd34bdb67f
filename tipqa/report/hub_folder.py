"""BuildHubFolder: the Hub-ready folder (`tipqa.hub.folder`), with the boundary's configurations
when it is built and, with `[hub] explorer`, the explorer page (this layer's) inside."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tipqa.build.assemble import hub_extension, token_index
from tipqa.build.step_inputs import HubInputs, TokenIndexInputs
from tipqa.core.layout import RunLayout
from tipqa.hub.folder import HubFolderStats, build_hub_folder
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import write_explorer


def _explorer(index: TokenIndexInputs, layout: RunLayout, folder: Path) -> int:
    """Write the explorer page into `folder` (window texts from the token index)."""
    texts = TextSource(fetch=token_index(index, layout).get)
    return write_explorer(layout, texts, folder)["questions"]


def write_hub_folder(inputs: HubInputs, layout: RunLayout) -> HubFolderStats:
    """Build the run's Hub-ready folder from its splits, as `[hub]` says."""
    hub = inputs.hub
    explorer = partial(_explorer, inputs.index, layout) if hub.explorer else None
    extension = hub_extension(inputs.dating, layout, hub.repo_id)
    return build_hub_folder(layout, hub, inputs.record, extension, explorer)
