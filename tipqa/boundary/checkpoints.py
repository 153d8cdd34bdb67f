"""The split as of each checkpoint: answerable if relevant evidence was consumed by then.

As of step s (the checkpoint after s training steps) a question answerable in the ordinary
split stays answerable when some relevant evidence was first consumed at step <= s, and is
unanswerable otherwise: the corpus holds the answer, but the model at step s had not read it
yet. A question none of whose relevant evidence was found in the training stream is
undetermined at every checkpoint (we cannot date it; it is never read as unanswerable).
Unanswerable, discarded and undetermined questions keep their label. So the answerable set
can only grow with s (the splits are nested), and once s reaches every first-seen step the
split is the ordinary one but for the questions none of whose evidence was found: they stay
undetermined, so even the last checkpoint's split equals the ordinary one only when every
answerable question's evidence was found.

Only the judged evidence is dated (the first k1 token-search candidates, all of them with
`judge_all_candidates`, and the k2 vector chunks), so a first-seen step is an upper bound of
the first step at which the model read relevant evidence: a question unanswerable as of s may
have had unjudged evidence read earlier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tipqa.boundary.records import FirstSeen
from tipqa.core.errors import InputError
from tipqa.core.records import LABELS, LabeledQuestion


def _evidence_at(row: LabeledQuestion, seen: FirstSeen, step: int) -> Any:
    """The row's own evidence when it was consumed by `step`, else the earliest one."""
    if row.evidence is not None:
        for item in seen.relevant:
            same = (item.doc_id, item.unit_id, item.text) == (
                row.evidence.doc_id,
                row.evidence.unit_id,
                row.evidence.text,
            )
            if same and item.step is not None and item.step <= step:
                return row.evidence
    return seen.evidence


def label_at(row: LabeledQuestion, seen: FirstSeen | None, step: int) -> LabeledQuestion:
    """The row as of checkpoint `step`."""
    if row.label != "answerable":
        return row
    if seen is None:
        raise InputError(f"answerable question {row.id} has no first-seen record", field="id")
    if seen.first_seen_step is None:
        reason = (
            f"none of its {len(seen.relevant)} relevant evidence was found in the training "
            "stream, so when the model read it is unknown"
        )
        return dataclasses.replace(row, label="undetermined", reason=reason, evidence=None)
    if seen.first_seen_step > step:
        reason = (
            f"its relevant evidence was first consumed at step {seen.first_seen_step}, "
            f"after step {step}"
        )
        return dataclasses.replace(row, label="unanswerable", reason=reason, evidence=None)
    return dataclasses.replace(row, evidence=_evidence_at(row, seen, step))


def checkpoint_splits(
    rows: Sequence[LabeledQuestion],
    seen: Mapping[str, FirstSeen],
    checkpoints: Sequence[int],
) -> Iterator[tuple[int, list[LabeledQuestion]]]:
    """(step, every row as of that step) for each checkpoint, in increasing order.

    One checkpoint's split at a time: a build with Pythia's 154 checkpoints never holds more.
    """
    steps = sorted(set(checkpoints))
    if not steps or steps[0] < 0:
        raise ValueError(f"checkpoints must be steps >= 0, got {list(checkpoints)}")
    for step in steps:
        yield step, [label_at(row, seen.get(row.id), step) for row in rows]


def answerable_shares(splits: Mapping[int, Sequence[LabeledQuestion]]) -> list[dict[str, Any]]:
    """Per checkpoint: questions by label, and the answerable share of the decided ones."""
    out = []
    for step in sorted(splits):
        counts: dict[str, int] = {label: 0 for label in LABELS}
        for row in splits[step]:
            counts[row.label] += 1
        decided = counts["answerable"] + counts["unanswerable"]
        share = counts["answerable"] / decided if decided else None
        entry: dict[str, Any] = {"step": step, **counts, "answerable_share": share}
        out.append(entry)
    return out
