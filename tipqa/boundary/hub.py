"""The boundary over training time in the Hub-ready folder and the report.

The folder gains one configuration per checkpoint, `questions_step<N>`: the `questions`
configuration (same splits, same rows in the same order) labelled as of step N, and
`first_seen`: each answerable question's first step and all its dated evidence. The rows come
from the pools' boundary files (`tipqa.core.layout.BoundaryLayout`), joined to the splits by
question id; the card explains the definition in the words of `tipqa.boundary.checkpoints`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from tipqa.boundary import checkpoints
from tipqa.boundary.checkpoints import answerable_shares
from tipqa.boundary.records import FirstSeen
from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_records
from tipqa.core.layout import RunLayout, SplitsLayout
from tipqa.core.records import SCHEMA_VERSION, LabeledQuestion
from tipqa.core.text import markdown_table
from tipqa.dataset.partition import flatten_evidence, question_row
from tipqa.dataset.splits import SPLITS
from tipqa.hub.folder import HubConfig, count_lines, question_schema

REMEDY = "run the build again: luigi --module pipelines CreateDataset --local-scheduler"
SHOWN_CHECKPOINTS = 10
FIRST_SEEN_FIELDS = [
    ("question_id", "id of the question (answerable in the same split of `questions`)"),
    ("first_seen_step", "the first training step that consumed relevant evidence (null: none)"),
    ("exact", "false when the step of some relevant evidence is not exact (so may "
     "`first_seen_step` not be)"),
    ("evidence_stage", "stage of that evidence: `token` (judge window) or `vector` (chunk)"),
    ("evidence_doc_id", "corpus id of its document"),
    ("evidence_unit_id", "the judged window or chunk"),
    ("evidence_text", "the judged text"),
    ("relevant", "every relevant evidence with its `step` (null: never consumed), `matched` "
     "(what was looked for), `unlocated` (tokens found in no training sequence), `exact` "
     "(false: a few first or last tokens could not be placed for certain, so `step` is an "
     "upper bound or leaves them unlocated)"),
]  # fmt: skip


def split_pools(info: Mapping[str, Any]) -> dict[str, str]:
    """The pool each split was made from (the splits' statistics say)."""
    return {name: split["pool"] for name, split in info["splits"].items()}


class PoolCheckpoints:
    """The pools' rows as of one checkpoint at a time (the last file read is kept)."""

    def __init__(self, run: RunLayout) -> None:
        self.run = run
        self._key: tuple[str, int] | None = None
        self._rows: dict[str, LabeledQuestion] = {}

    def rows(self, pool: str, step: int) -> dict[str, LabeledQuestion]:
        """Every question of `pool` as of checkpoint `step`, by id."""
        if self._key != (pool, step):
            path = self.run.pool(pool).boundary.checkpoint(step)
            if not path.is_file():
                raise InputError(
                    f"pool {pool!r} has no split as of step {step}: {REMEDY}", path=str(path)
                )
            self._rows = {row.id: row for row in iter_records(path, LabeledQuestion)}
            self._key = (pool, step)
        return self._rows

    def split_rows(
        self, splits: SplitsLayout, split: str, pool: str, step: int
    ) -> Iterator[LabeledQuestion]:
        """The split's questions, in split order, as of checkpoint `step` (with the split's
        verbatim counts: they are the question's, whatever the checkpoint)."""
        rows = self.rows(pool, step)
        path = splits.questions(split)
        for question in iter_records(path, LabeledQuestion):
            found = rows.get(question.id)
            if found is None:
                raise InputError(
                    f"question {question.id} of split {split!r} is not in pool {pool!r}'s "
                    f"boundary files: {REMEDY}",
                    path=str(path),
                )
            yield dataclasses.replace(
                found,
                verbatim_docs=question.verbatim_docs,
                verbatim_with_alias=question.verbatim_with_alias,
            )


def first_seen_schema() -> Any:
    """Arrow schema of the `first_seen` configuration."""
    import pyarrow as pa

    string = pa.string()
    relevant = pa.struct(
        [
            ("stage", string),
            ("doc_id", string),
            ("unit_id", string),
            ("text", string),
            ("step", pa.int64()),
            ("matched", string),
            ("unlocated", pa.int64()),
            ("exact", pa.bool_()),
        ]
    )
    return pa.schema(
        [
            ("question_id", string),
            ("first_seen_step", pa.int64()),
            ("exact", pa.bool_()),
            ("evidence_stage", string),
            ("evidence_doc_id", string),
            ("evidence_unit_id", string),
            ("evidence_text", string),
            ("relevant", pa.list_(relevant)),
        ],
        metadata={"tipqa_schema_version": str(SCHEMA_VERSION)},
    )


def first_seen_row(seen: FirstSeen) -> dict[str, Any]:
    """A flat row of the `first_seen` configuration."""
    return flatten_evidence(seen.to_dict())


class CheckpointConfig:
    """`questions_step<N>`: the `questions` configuration as of checkpoint N.

    It counts the labels of the rows it yields (`labels`), for the card.
    """

    def __init__(self, step: int, pools: Mapping[str, str], source: PoolCheckpoints) -> None:
        self.step = step
        self.name = f"questions_step{step}"
        self.schema = question_schema()
        self.pools = pools
        self.source = source
        self.labels: dict[str, Counter[str]] = {}

    def count(self, splits: SplitsLayout, split: str) -> int:
        """As many rows as the split has."""
        return count_lines(splits.questions(split))

    def rows(self, splits: SplitsLayout, split: str) -> Iterator[dict[str, Any]]:
        """The split's rows as of this checkpoint."""
        labels = self.labels.setdefault(split, Counter())
        for row in self.source.split_rows(splits, split, self.pools[split], self.step):
            labels[row.label] += 1
            yield question_row(row)


class FirstSeenConfig:
    """`first_seen`: each answerable question of a split, when its evidence was first read."""

    name = "first_seen"

    def __init__(self, run: RunLayout, pools: Mapping[str, str]) -> None:
        self.run = run
        self.pools = pools
        self.schema = first_seen_schema()

    def _path(self, split: str) -> Path:
        return self.run.pool(self.pools[split]).boundary.first_seen

    def _answerable(self, splits: SplitsLayout, split: str) -> set[str]:
        path = splits.questions(split)
        return {q.id for q in iter_records(path, LabeledQuestion) if q.label == "answerable"}

    def count(self, splits: SplitsLayout, split: str) -> int:
        """The split's answerable questions (each must have its record)."""
        wanted = self._answerable(splits, split)
        path = self._path(split)
        if not path.is_file():
            raise InputError(f"no first-seen records: {REMEDY}", path=str(path))
        with open(path, "rb") as handle:
            found = {orjson.loads(line)["question_id"] for line in handle if line.strip()}
        missing = wanted - found
        if missing:
            raise InputError(
                f"{len(missing)} answerable question(s) of split {split!r} have no first-seen "
                f"record (e.g. {min(missing)}): {REMEDY}",
                path=str(path),
            )
        return len(wanted)

    def rows(self, splits: SplitsLayout, split: str) -> Iterator[dict[str, Any]]:
        """The records of the split's answerable questions, in pool order."""
        wanted = self._answerable(splits, split)
        for seen in iter_records(self._path(split), FirstSeen):
            if seen.question_id in wanted:
                yield first_seen_row(seen)


def split_shares(
    run: RunLayout, info: Mapping[str, Any], steps: Sequence[int]
) -> dict[str, list[dict[str, Any]]]:
    """Per split and checkpoint: its questions by label as of then, and the answerable share."""
    splits = SplitsLayout(run.splits)
    pools = split_pools(info)
    names = [name for name in SPLITS if name in pools]
    source = PoolCheckpoints(run)
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for step in sorted(set(steps)):
        for name in names:
            rows = list(source.split_rows(splits, name, pools[name], step))
            out[name].extend(answerable_shares({step: rows}))
    return out


def shown_steps(steps: Sequence[int], most: int = SHOWN_CHECKPOINTS) -> list[int]:
    """At most `most` of the steps, evenly spaced, the first and the last among them."""
    ordered = sorted(set(steps))
    if len(ordered) <= most:
        return ordered
    picks = {round(i * (len(ordered) - 1) / (most - 1)) for i in range(most)}
    return [ordered[i] for i in sorted(picks)]


def definition() -> str:
    """The definition of the split as of a checkpoint, from `tipqa.boundary.checkpoints`."""
    text = (checkpoints.__doc__ or "").strip()
    paragraphs = [" ".join(part.split()) for part in text.split("\n\n")]
    return "\n\n".join(paragraphs)


def _share(counts: Mapping[str, int]) -> str:
    answerable = counts.get("answerable", 0)
    decided = answerable + counts.get("unanswerable", 0)
    return f"{answerable:,} / {decided:,} ({answerable / decided:.1%})" if decided else "-"


class BoundaryHub:
    """The folder extension (`tipqa.hub.folder.FolderExtension`) of the boundary."""

    def __init__(
        self, run: RunLayout, steps: Sequence[int], order: Mapping[str, Any], repo_id: str = ""
    ) -> None:
        self.run = run
        self.steps = sorted(set(steps))
        self.order = dict(order)
        self.repo = repo_id or "<user>/<name>"
        self._checkpoints: list[CheckpointConfig] = []

    def configs(self, info: dict[str, Any]) -> list[HubConfig]:
        """One configuration per checkpoint, then `first_seen`."""
        pools = split_pools(info)
        source = PoolCheckpoints(self.run)
        self._checkpoints = [CheckpointConfig(step, pools, source) for step in self.steps]
        return [*self._checkpoints, FirstSeenConfig(self.run, pools)]

    def card_sections(self, info: dict[str, Any], rows: dict[str, dict[str, int]]) -> list[str]:
        """The definition, the answerable share at a few checkpoints, and the fields."""
        names = [name for name in SPLITS if name in split_pools(info)]
        by_step = {c.step: c.labels for c in self._checkpoints}
        shown = [step for step in shown_steps(self.steps) if step in by_step]
        table = markdown_table(
            ["Checkpoint", *(f"{name}: answerable / decided" for name in names)],
            [
                [f"step {step:,}", *(_share(by_step[step].get(n, {})) for n in names)]
                for step in shown
            ],
        )
        first, last = self.steps[0], self.steps[-1]
        where = self.order.get("path") or ", ".join(self.order.get("paths") or [])
        order = f"`{self.order.get('backend')}` ({Path(str(where)).name or 'no path'})"
        at_last = by_step.get(last, {})
        undetermined = sum(at_last[n]["undetermined"] for n in names if n in at_last)
        parts = [
            "## Knowledge boundary over training time",
            definition(),
            "Steps count from 1, as checkpoint names do: the checkpoint `step s` has read the "
            f"first s batches of the training order, {order}.",
            f"Configurations `questions_step<N>` ({len(self.steps)} checkpoints, from step "
            f"{first:,} to {last:,}) hold the rows of `questions`, same splits and order, with "
            "`label`, `reason` and `evidence_*` as of checkpoint N. `first_seen` holds, for each "
            "answerable question, its first step and all its relevant evidence, dated.",
            table,
            f"At the last checkpoint, {undetermined:,} question(s) of the splits are "
            "undetermined: none of their relevant evidence was found in the training stream.",
            "```python\nfrom datasets import load_dataset\n\n"
            f'as_of = load_dataset("{self.repo}", "questions_step{last}")\n```',
        ]
        if "first_seen" in rows:
            parts.append(
                "`first_seen`:\n\n"
                + markdown_table(["Column", "Meaning"], [list(f) for f in FIRST_SEEN_FIELDS])
            )
        return ["\n\n".join(parts)]
