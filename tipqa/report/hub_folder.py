"""BuildHubFolder: the Hub-ready folder (`tipqa.hub.folder`), with the boundary's configurations
when it is built, what the card says of how far the labels can be trusted (the pools' audits,
the judge's agreement with people) and, with `[hub] explorer`, the explorer page (this layer's)
inside, in its small form (texts that are not evidence kept as excerpts)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tipqa.builder.annotation import annotation_layout
from tipqa.builder.assemble import hub_extension, token_index
from tipqa.builder.step_inputs import HubInputs
from tipqa.core.layout import RunLayout
from tipqa.hub.folder import HubFolderStats, TrustFiles, build_hub_folder
from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.store import EXCERPTS
from tipqa.report.explorer.write import write_explorer


def _explorer(inputs: HubInputs, layout: RunLayout, folder: Path) -> int:
    """Write the explorer page into `folder`: window texts from the token index, kept as
    excerpts around their matches but for the evidence (the Hub's small copy)."""
    texts = TextSource(fetch=token_index(inputs.index, layout).get)
    made_by = inputs.record.fingerprint
    return write_explorer(layout, texts, folder, form=EXCERPTS, made_by=made_by)["questions"]


def write_hub_folder(inputs: HubInputs, layout: RunLayout) -> HubFolderStats:
    """Build the run's Hub-ready folder from its splits, as `[hub]` says."""
    hub = inputs.hub
    explorer = partial(_explorer, inputs, layout) if hub.explorer else None
    extension = hub_extension(inputs.dating, layout, hub.repo_id)
    agreement = None
    if inputs.agreement is not None:
        agreement = annotation_layout(inputs.agreement.annotation, layout).report_json
    trust = TrustFiles(inputs.audits, agreement)
    return build_hub_folder(layout, hub, inputs.record, extension, explorer, trust)
