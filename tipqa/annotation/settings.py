"""[annotation]: the human-annotation sample (section 4.5 of the paper) and its report."""

from __future__ import annotations

from dataclasses import dataclass

from tipqa.annotation.sampling import SamplingSettings
from tipqa.settings import Settings, knob


@dataclass(frozen=True)
class AnnotationSettings(Settings):
    """[annotation]: which pool is sampled, how, and where completed files are read from."""

    pool: str = "dev"
    triplets: int = 700
    double: int = 200
    annotators: int = 10
    seed: int = 0
    bootstrap: int = 1000
    completed_dir: str = knob("annotation/completed", doc="<annotator>.csv/.json files")

    def sampling(self) -> SamplingSettings:
        """The sampling part of these settings."""
        return SamplingSettings(self.triplets, self.double, self.annotators, self.seed)
