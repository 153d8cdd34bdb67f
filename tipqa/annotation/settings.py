"""[annotation]: the human-annotation sample (section 4.5 of the paper) and its report."""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.annotation.sampling import SamplingSettings
from tipqa.core.settings import Settings, knob, setting


@dataclass(frozen=True)
class AnnotationSettings(Settings):
    """[annotation]: which pool is sampled, how, and where completed files are read from."""

    pool: str = setting("dev", doc="the question pool to sample from")
    triplets: int = setting(700, doc="question-document-answer triplets")
    double: int = setting(200, doc="triplets given to two annotators")
    annotators: int = setting(10, doc="annotators")
    seed: int = setting(0, doc="sampling, assignment and bootstrap seed")
    bootstrap: int = setting(1000, doc="bootstrap resamples of the confidence intervals")
    completed_dir: str = knob("annotation/completed", doc="<annotator>.csv, .xlsx or .json files")

    def sampling(self) -> SamplingSettings:
        """The sampling part of these settings."""
        return SamplingSettings(self.triplets, self.double, self.annotators, self.seed)
