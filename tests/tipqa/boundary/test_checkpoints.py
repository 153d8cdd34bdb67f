"""Splits as of each checkpoint: nested, and the last one equals the ordinary split."""

from __future__ import annotations

import random

import pytest

from tipqa.boundary.checkpoints import answerable_shares, checkpoint_splits, label_at
from tipqa.boundary.records import FirstSeen, SeenEvidence
from tipqa.core.errors import InputError
from tipqa.core.records import LABELS, Evidence, LabeledQuestion


def row(qid: str, label: str, evidence: Evidence | None = None) -> LabeledQuestion:
    return LabeledQuestion(qid, f"Question {qid}?", "A", ["A"], label, "token", "ordinary",  # type: ignore[arg-type]
                           ["kw"], 3, evidence)  # fmt: skip


def seen(qid: str, steps: list[int | None]) -> FirstSeen:
    relevant = [
        SeenEvidence("token", f"{qid}-d{i}", f"{qid}-d{i}@w0", f"text {i}", step, "window")
        for i, step in enumerate(steps)
    ]
    dated = [(s.step, i) for i, s in enumerate(relevant) if s.step is not None]
    if not dated:
        return FirstSeen(qid, None, None, relevant)
    step, index = min(dated)
    return FirstSeen(qid, step, relevant[index].evidence(), relevant)


def evidence_of(qid: str, index: int) -> Evidence:
    return Evidence("token", f"{qid}-d{index}", f"{qid}-d{index}@w0", f"text {index}")


def test_authored_partition_over_checkpoints() -> None:
    rows = [
        row("a1", "answerable", evidence_of("a1", 0)),
        row("a2", "answerable", evidence_of("a2", 0)),
        row("u1", "unanswerable"),
        row("x1", "discarded"),
        row("n1", "undetermined"),
    ]
    first = {"a1": seen("a1", [10]), "a2": seen("a2", [300, 120])}
    splits = dict(checkpoint_splits(rows, first, [143_000, 0, 100, 120]))
    assert list(splits) == [0, 100, 120, 143_000]
    labels = {step: [r.label for r in split] for step, split in splits.items()}
    assert labels[0] == ["unanswerable", "unanswerable", "unanswerable", "discarded",
                         "undetermined"]  # fmt: skip
    assert labels[100][:2] == ["answerable", "unanswerable"]
    assert labels[120][:2] == ["answerable", "answerable"]
    assert splits[143_000] == [label_at(r, first.get(r.id), 143_000) for r in rows]
    late = splits[100][1]
    assert late.reason == "its relevant evidence was first consumed at step 120, after step 100"
    assert late.evidence is None and late.stage == "token"
    assert splits[120][1].evidence == evidence_of("a2", 1)  # its own evidence came later
    assert splits[143_000][1].evidence == evidence_of("a2", 0)  # by then the ordinary one
    assert splits[143_000][1] == rows[1]
    shares = answerable_shares(splits)
    assert shares[0] == {"step": 0, "answerable": 0, "unanswerable": 3, "discarded": 1,
                         "undetermined": 1, "answerable_share": 0.0}  # fmt: skip
    assert [s["answerable_share"] for s in shares] == [0.0, 1 / 3, 2 / 3, 2 / 3]


def test_evidence_never_found_is_undetermined_at_every_checkpoint() -> None:
    rows = [row("a1", "answerable", evidence_of("a1", 0))]
    splits = dict(checkpoint_splits(rows, {"a1": seen("a1", [None, None])}, [5, 10]))
    assert {split[0].label for split in splits.values()} == {"undetermined"}
    assert "none of its 2 relevant evidence was found" in splits[10][0].reason
    with pytest.raises(InputError, match="answerable question a1 has no first-seen record"):
        dict(checkpoint_splits(rows, {}, [5]))
    with pytest.raises(ValueError, match="checkpoints must be steps >= 0"):
        dict(checkpoint_splits(rows, {}, [-1]))


def test_random_partitions_are_nested_and_end_at_the_ordinary_split() -> None:
    rng = random.Random(13)
    for case in range(200):
        rows, first = [], {}
        for i in range(rng.randint(1, 30)):
            label = rng.choice(LABELS)
            qid = f"q{i}"
            if label == "answerable":
                steps = [rng.randint(1, 1000) for _ in range(rng.randint(1, 4))]
                first[qid] = seen(qid, steps)
                rows.append(row(qid, label, evidence_of(qid, rng.randrange(len(steps)))))
            else:
                rows.append(row(qid, label))
        checkpoints = [*sorted(rng.sample(range(0, 1000), 6)), 1000]
        splits = dict(checkpoint_splits(rows, first, checkpoints))
        previous: set[str] = set()
        for step in checkpoints:
            answerable = {r.id for r in splits[step] if r.label == "answerable"}
            assert previous <= answerable, case
            assert {r.id for r in splits[step] if r.label in ("discarded", "undetermined")} == {
                r.id for r in rows if r.label in ("discarded", "undetermined")
            }
            previous = answerable
        assert splits[1000] == rows, case
