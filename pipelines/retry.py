"""RetryFailed: send the undetermined questions of failed LLM calls back for another try."""

from __future__ import annotations

import os

from pipelines.base import OfTheRun
from pipelines.summary import announce
from tipqa.builder.summary import luigi_command
from tipqa.dataset.retry import reset_failed


class RetryFailed(OfTheRun):
    """Reset failed shards: `luigi --module pipelines RetryFailed`, then CreateDataset again.

    It runs every time and says what it reset, or that there was nothing to reset (with the
    run folder it looked in, which tells a wrong configuration file at once).
    """

    def complete(self) -> bool:
        return False

    def run(self) -> None:
        layout, pools = self.layout, self.plan.pool_names
        counts = reset_failed(layout, pools)
        config_path = os.environ.get("LUIGI_CONFIG_PATH")
        if counts["shards_reset"]:
            announce(
                f"RetryFailed: {counts['shards_reset']} shard(s) of {layout.root} sent back "
                "(from their first step with a failed LLM call; the partitions, splits, Hub "
                f"folder and report go too). Now run: {luigi_command('CreateDataset', config_path)}"
            )
        else:
            announce(
                f"RetryFailed: nothing to retry: no shard of the pools {', '.join(pools)} in "
                f"{layout.root} recorded a failed LLM call (configuration: "
                f"{config_path or 'luigi.cfg in ' + os.getcwd()})."
            )
