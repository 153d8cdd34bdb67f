"""RetryFailed: send the undetermined questions of failed LLM calls back for another try."""

from __future__ import annotations

import luigi

from pipelines.config import build, questions
from tipqa.retry import failed_shards, reset_failed


class RetryFailed(luigi.Task):
    """Reset failed shards: `luigi --module pipelines RetryFailed`, then CreateDataset again."""

    def complete(self) -> bool:
        return not failed_shards(build().layout(), list(questions().pools))

    def run(self) -> None:
        reset_failed(build().layout(), list(questions().pools))
