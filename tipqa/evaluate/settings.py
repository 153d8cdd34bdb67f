"""[evaluate]: how the `Evaluate` step reads refusals and scores a model's answers.

One section holds both parts; `refusal()` and `scoring()` hand each to the code that uses it.
The model under evaluation has its own section, `[evaluate.<backend>]` (see `answerers`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.evaluate.refusal import RefusalSettings
from tipqa.evaluate.score import ScoringSettings

ANSWERER_SECTION = "evaluate."
"""The prefix of an answerer backend's section: `[evaluate.openai]`, `[evaluate.vllm]`."""


@dataclass(frozen=True)
class EvaluateSettings(ScoringSettings, RefusalSettings):
    """[evaluate]: refusal detection (threshold t, phrases, rules) and the scoring's bins."""

    def refusal(self) -> RefusalSettings:
        """The refusal detector's part."""
        return RefusalSettings(
            threshold=self.threshold,
            phrases=self.phrases,
            embedding=self.embedding,
            boxed=self.boxed,
        )

    def scoring(self) -> ScoringSettings:
        """The scorer's part."""
        return ScoringSettings(
            bins=self.bins,
            min_bin_count=self.min_bin_count,
            bootstrap=self.bootstrap,
            seed=self.seed,
        )
