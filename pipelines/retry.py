"""RetryFailed: send the undetermined questions of failed LLM calls back for another try."""

from __future__ import annotations

import luigi

from pipelines.config import current
from tipqa.retry import failed_shards, reset_failed


class RetryFailed(luigi.Task):
    """Reset failed shards: `luigi --module pipelines RetryFailed`, then CreateDataset again."""

    def complete(self) -> bool:
        config = current()
        return not failed_shards(config.layout(), config.pool_names)

    def run(self) -> None:
        config = current()
        reset_failed(config.layout(), config.pool_names)
