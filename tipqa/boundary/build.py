"""The boundary step of a build: every answerable question dated, and the split per checkpoint.

`relevant_evidence` gathers each answerable question's relevant evidence from a shard's stage
records (`shard_evidence` reads them); `write_boundary` dates it with a training order and
writes (`BoundaryLayout`):

    first_seen.jsonl          one FirstSeen per answerable question (step and evidence)
    questions_step<N>.jsonl   every question as of checkpoint N (LabeledQuestion rows)
    shares.json               per checkpoint: questions by label, the answerable share
    boundary.png              the answerable share against the training step
    stats.json                counts and provenance (written last: the step's completion mark)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tipqa.boundary.checkpoints import answerable_shares, checkpoint_splits
from tipqa.boundary.evidence import first_seen, token_evidence, vector_evidence
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import iter_records, read_records, write_json, write_records
from tipqa.core.layout import BoundaryLayout, ShardLayout
from tipqa.core.records import (
    Evidence,
    Judgment,
    Keywords,
    LabeledQuestion,
    Question,
    VectorInstance,
)
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import Counted, StepStats
from tipqa.core.steps import Step
from tipqa.dataset.figures import draw_boundary
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.stages.windows import WindowSettings
from tipqa.training_order.base import TrainingOrder

PYTHIA_CHECKPOINTS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, *range(1000, 143_001, 1000))


def expand_checkpoints(items: Sequence[str]) -> tuple[int, ...]:
    """Checkpoint steps from a list: numbers, "a, b, ..., c" progressions, or "pythia".

    "pythia" is Pythia's 154 checkpoints (0, 1, 2, 4, ..., 512, then every 1,000 to 143,000).
    """
    parts = [p.strip() for item in items for p in item.split(",") if p.strip()]
    if [p.lower() for p in parts] == ["pythia"]:
        return PYTHIA_CHECKPOINTS
    steps: list[int] = []
    for index, part in enumerate(parts):
        if part in ("...", "…"):
            following = parts[index + 1] if index + 1 < len(parts) else ""
            if len(steps) < 2 or not following.isdigit() or steps[-1] <= steps[-2]:
                raise ValueError(
                    "checkpoints: '...' needs two increasing steps before it and one after"
                )
            first, second = steps[-2], steps[-1]
            steps.extend(range(second + (second - first), int(following), second - first))
        elif part.isdigit():
            steps.append(int(part))
        else:
            raise ValueError(f"checkpoints: {part!r} is not a step, '...' or 'pythia'")
    return tuple(sorted(set(steps)))


@dataclass(frozen=True)
class BoundarySettings(Settings):
    """The `[boundary]` section: judge every candidate; the checkpoints to split at."""

    judge_all_candidates: bool = setting(
        False, doc="judge all k1 token candidates, not only up to the first relevant one"
    )
    checkpoints: tuple[str, ...] = setting(
        (), doc="steps to split at: numbers, `a, b, ..., c` progressions, or `pythia`"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        expand_checkpoints(self.checkpoints)

    def steps(self) -> tuple[int, ...]:
        """The checkpoint steps, sorted."""
        return expand_checkpoints(self.checkpoints)


def relevant_evidence(
    questions: Sequence[Question],
    answerable: set[str],
    keywords: Mapping[str, Keywords],
    token_judgments: Iterable[Judgment],
    instances: Iterable[VectorInstance],
    fetch: FetchDocuments,
    windows: WindowSettings,
) -> dict[str, list[Evidence]]:
    """The relevant evidence of a shard's answerable questions (token windows, then chunks)."""
    chosen = [q for q in questions if q.id in answerable]
    token = token_evidence(chosen, keywords, token_judgments, fetch, windows)
    vector = vector_evidence(i for i in instances if i.question_id in answerable)
    return {q.id: token.get(q.id, []) + vector.get(q.id, []) for q in chosen}


def shard_evidence(
    questions: list[Question],
    rows: Sequence[LabeledQuestion],
    shard: ShardLayout,
    fetch: FetchDocuments,
    windows: WindowSettings,
) -> dict[str, list[Evidence]]:
    """The relevant evidence of one shard's answerable questions, from its stage records."""
    answerable = {row.id for row in rows if row.label == "answerable"}
    keywords = {k.question_id: k for k in read_records(shard.keywords, Keywords)}
    return relevant_evidence(
        questions,
        answerable,
        keywords,
        iter_records(shard.token_judgments, Judgment),
        iter_records(shard.instances, VectorInstance),
        fetch,
        windows,
    )


def write_boundary(
    rows: Sequence[LabeledQuestion],
    evidence: Mapping[str, Sequence[Evidence]],
    order: TrainingOrder,
    fetch: FetchDocuments,
    checkpoints: Sequence[int],
    out: BoundaryLayout,
    record: StepRecord,
) -> StepStats:
    """Date the answerable questions' evidence and write the split as of each checkpoint."""
    steps = sorted(set(checkpoints))
    info = {"checkpoints": steps}
    stats = StepStats(Step.BOUNDARY, info=info, provenance=record.provenance())
    answerable = [r for r in rows if r.label == "answerable"]
    seen = first_seen({r.id: evidence.get(r.id, []) for r in answerable}, order, fetch, stats)
    write_records(out.first_seen, (seen[r.id] for r in answerable))
    current = {out.checkpoint(step) for step in steps}
    for stale in set(out.checkpoint_files()) - current:
        stale.unlink()
    shares = []
    for step, split in checkpoint_splits(rows, seen, steps):
        write_records(out.checkpoint(step), split)
        shares.extend(answerable_shares({step: split}))
    write_json(out.shares, shares)
    draw_boundary({"all questions": shares}, out.figure)
    if isinstance(order, Counted):
        stats.merge(order.stats, prefix="training_order.")
        stats.info["training_order"] = order.stats.info
    stats.add("questions", len(rows))
    stats.add("answerable", len(answerable))
    stats.add("answerable_without_evidence", sum(not evidence.get(r.id) for r in answerable))
    stats.write(out.stats)
    return stats
