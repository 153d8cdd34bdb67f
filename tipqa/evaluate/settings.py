"""[evaluate]: how the `Evaluate` step reads refusals and scores a model's answers.

One section holds the three parts; `refusal()`, `scoring()` and `confidence()` hand each to the
code that uses it.
The model under evaluation has its own section, `[evaluate.<backend>]` (see `answerers`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.evaluate.confidence import ConfidenceSettings
from tipqa.evaluate.refusal import RefusalSettings
from tipqa.evaluate.score import ScoringSettings

ANSWERER_SECTION = "evaluate."
"""The prefix of an answerer backend's section: `[evaluate.openai]`, `[evaluate.vllm]`."""


@dataclass(frozen=True)
class EvaluateSettings(ConfidenceSettings, ScoringSettings, RefusalSettings):
    """[evaluate]: refusal detection (threshold t, phrases, rules), the scoring's bins, and the
    confidences beyond the sequence probability (sampled answers, P(True), temperature scaling).
    """

    def refusal(self) -> RefusalSettings:
        """The refusal detector's part."""
        return RefusalSettings(
            threshold=self.threshold,
            phrases=self.phrases,
            embedding=self.embedding,
            boxed=self.boxed,
        )

    def confidence(self) -> ConfidenceSettings:
        """The confidence measures' part."""
        return ConfidenceSettings(
            samples=self.samples,
            sample_temperature=self.sample_temperature,
            sample_max_tokens=self.sample_max_tokens,
            equivalence=self.equivalence,
            p_true=self.p_true,
            temperature_scaling=self.temperature_scaling,
        )

    def scoring(self) -> ScoringSettings:
        """The scorer's part."""
        return ScoringSettings(
            bins=self.bins,
            min_bin_count=self.min_bin_count,
            bootstrap=self.bootstrap,
            seed=self.seed,
        )
