"""The knowledge boundary over training time: when the model first saw each question's evidence."""

from tipqa.boundary.checkpoints import answerable_shares, checkpoint_splits, label_at
from tipqa.boundary.evidence import first_seen, token_evidence, vector_evidence
from tipqa.boundary.records import FirstSeen, SeenEvidence

__all__ = [
    "FirstSeen",
    "SeenEvidence",
    "answerable_shares",
    "checkpoint_splits",
    "first_seen",
    "label_at",
    "token_evidence",
    "vector_evidence",
]
