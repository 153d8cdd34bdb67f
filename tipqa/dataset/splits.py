"""The benchmark's splits, as in the paper's table 2: test from one pool, train and validation
from another.

The test split is every answerable and unanswerable question of the test pool (TriviaQA's dev
set in the paper). The validation split is a seeded, balanced sample of `validation_per_label`
answerable and as many unanswerable questions of the train pool (TriviaQA's train set); the train
split is the rest of that pool. Discarded and undetermined questions stay out of every split but
are counted. Without a train pool only the test split is made.

Files under the splits folder: `<split>/questions.jsonl` (`LabeledQuestion`),
`<split>/instances.jsonl` (the vector-stage `VectorInstance`s of the split's questions),
`<split>/qrels.txt` and `<split>/judged_units.jsonl` (the relevance files of `tipqa.dataset.qrels`)
and `stats.json`, written last.
"""

from __future__ import annotations

import contextlib
import logging
import random
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import atomic_open, iter_records
from tipqa.core.layout import PartitionLayout, RunLayout, SplitsLayout
from tipqa.core.records import LABELS, LabeledQuestion, VectorInstance
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.dataset.provenance import REMEDY, construction_parameters, shared_steps
from tipqa.dataset.qrels import split_relevance

log = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("train", "validation", "test")
SPLIT_LABELS: tuple[str, ...] = ("answerable", "unanswerable")
LEFT_OUT: tuple[str, ...] = ("discarded", "undetermined")


@dataclass(frozen=True)
class SplitSettings(Settings):
    """[splits]: which pool feeds which split, the validation size per label, the seed.

    An empty `train_pool`, or one that is not a configured pool, means the test split only.
    """

    test_pool: str = setting("dev", doc="pool of the test split")
    train_pool: str = setting("train", doc="pool of train and validation (empty: test only)")
    validation_per_label: int = setting(1000, doc="validation questions per label (balanced)")
    seed: int = setting(0, doc="seed of the validation sample")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.validation_per_label < 0:
            raise ConfigError("[splits] validation_per_label must be 0 or more")
        if self.train_pool and self.train_pool == self.test_pool:
            raise ConfigError(
                f"[splits] test_pool and train_pool are both {self.test_pool!r}: "
                "the test split must come from another pool than train and validation"
            )

    def check_pools(self, pools: list[str]) -> None:
        """Raise ConfigError when the test pool is not among the configured pools."""
        if self.test_pool not in pools:
            raise ConfigError(
                f"[splits] test_pool {self.test_pool!r} is not a configured question pool; "
                f"pools: {', '.join(pools) or 'none'}"
            )

    def train(self, pools: list[str]) -> str | None:
        """The train pool when it is configured, else None (test split only)."""
        if self.train_pool and self.train_pool in pools:
            return self.train_pool
        if self.train_pool:
            log.info(
                "train pool %r is not configured: only the test split is made", self.train_pool
            )
        return None


@dataclass(frozen=True)
class SplitPlan:
    """The splits to make: the test pool, the train pool (or None), and the settings."""

    test_pool: str
    train_pool: str | None
    validation_per_label: int
    seed: int

    @classmethod
    def of(cls, settings: SplitSettings, pools: list[str]) -> SplitPlan:
        """The plan of these settings for the configured pools."""
        settings.check_pools(pools)
        return cls(
            settings.test_pool, settings.train(pools), settings.validation_per_label, settings.seed
        )

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits this plan makes."""
        return SPLITS if self.train_pool is not None else ("test",)

    @property
    def used_pools(self) -> list[str]:
        """The pools the splits read."""
        return [self.test_pool] + ([self.train_pool] if self.train_pool else [])


@dataclass
class PoolIndex:
    """One pool's partition as read back, lightly: (id, label, stage) of every question."""

    name: str
    partition: PartitionLayout
    entries: list[tuple[str, str, str]]
    info: dict[str, Any] = field(default_factory=dict)

    def ids(self, label: str) -> list[str]:
        """The ids of the questions with `label`, in file order."""
        return [qid for qid, item_label, _ in self.entries if item_label == label]

    def summary(self) -> dict[str, Any]:
        """Questions by label and by stage; discarded and undetermined are left out of splits."""
        labels = Counter(label for _, label, _ in self.entries)
        return {
            "questions": len(self.entries),
            **{label: labels.get(label, 0) for label in LABELS},
            "by_stage": _by_stage((label, stage) for _, label, stage in self.entries),
            "left_out": sum(labels.get(label, 0) for label in LEFT_OUT),
        }


def _by_stage(pairs: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Counts by final label and deciding stage, e.g. {"answerable_token": 12, ...}."""
    return dict(sorted(Counter(f"{label}_{stage}" for label, stage in pairs).items()))


def read_pool(name: str, partition: PartitionLayout) -> PoolIndex:
    """Index a pool's partition (one JSONL file per label, instances, stats)."""
    for path in [*(partition.labelled(label) for label in LABELS), partition.stats]:
        if not path.is_file():
            raise InputError(f"pool {name!r} has no partition file here", path=str(path))
    entries: list[tuple[str, str, str]] = []
    for label in LABELS:
        path = partition.labelled(label)
        for row in iter_records(path, LabeledQuestion):
            if row.label != label:
                raise InputError(
                    f"question {row.id} is labelled {row.label!r}", path=str(path), field="label"
                )
            entries.append((row.id, row.label, row.stage))
    stats = read_stats(partition.stats, REMEDY)
    info = stats.get("info", {})
    return PoolIndex(name, partition, entries, info if isinstance(info, dict) else {})


def sample_validation(
    answerable: list[str], unanswerable: list[str], per_label: int, seed: int
) -> tuple[set[str], dict[str, Any]]:
    """Draw a balanced validation sample of question ids; return it and what was taken.

    When a label has fewer than `per_label` questions, both labels give as many as the smaller
    one has, so the sample stays balanced; `short` is then true in the returned info.
    """
    taken = min(per_label, len(answerable), len(unanswerable))
    rng = random.Random(seed)
    chosen: set[str] = set()
    for ids in (answerable, unanswerable):
        chosen.update(rng.sample(sorted(ids), taken))
    info = {
        "requested_per_label": per_label,
        "taken_per_label": taken,
        "available": {"answerable": len(answerable), "unanswerable": len(unanswerable)},
        "short": taken < per_label,
        "seed": seed,
    }
    return chosen, info


def assign_splits(
    test: PoolIndex, train: PoolIndex | None, plan: SplitPlan
) -> tuple[dict[str, str], dict[str, Any] | None]:
    """Each split question's split by id, and the validation sample's info (None without train).

    A question id in both pools is an InputError: the splits must be disjoint.
    """
    membership = {qid: "test" for label in SPLIT_LABELS for qid in test.ids(label)}
    if train is None:
        return membership, None
    answerable, unanswerable = train.ids("answerable"), train.ids("unanswerable")
    validation, info = sample_validation(
        answerable, unanswerable, plan.validation_per_label, plan.seed
    )
    for qid in [*answerable, *unanswerable]:
        split = "validation" if qid in validation else "train"
        if qid in membership:
            raise InputError(
                f"question id {qid!r} is in split {membership[qid]!r} and in split {split!r}: "
                f"pools {test.name!r} and {train.name!r} share questions",
                path=str(train.partition.root),
            )
        membership[qid] = split
    return membership, info


def write_split_files(
    pools: list[PoolIndex], membership: dict[str, str], names: tuple[str, ...], out: SplitsLayout
) -> dict[str, dict[str, Any]]:
    """Stream the pools' questions and instances into the split files; return per-split counts."""
    counts: dict[str, dict[str, Any]] = {
        name: {"pairs": [], "instances": Counter()} for name in names
    }
    with contextlib.ExitStack() as stack:
        questions = {n: stack.enter_context(atomic_open(out.questions(n))) for n in names}
        instances = {n: stack.enter_context(atomic_open(out.instances(n))) for n in names}
        for pool in pools:
            for label in SPLIT_LABELS:
                for row in iter_records(pool.partition.labelled(label), LabeledQuestion):
                    split = membership[row.id]
                    questions[split].write(orjson.dumps(row.to_dict()) + b"\n")
                    counts[split]["pairs"].append((row.label, row.stage))
            path = pool.partition.instances
            for instance in iter_records(path, VectorInstance) if path.is_file() else []:
                target = membership.get(instance.question_id)
                if target is not None:
                    instances[target].write(orjson.dumps(instance.to_dict()) + b"\n")
                    relevant = instance.relevant
                    kind = "unknown" if relevant is None else ("yes" if relevant else "no")
                    counts[target]["instances"][kind] += 1
    return counts


def agreed_parameters(pools: list[PoolIndex]) -> dict[str, Any]:
    """The pools' common construction parameters; pools built otherwise are an InputError."""
    builds: list[dict[str, Any]] = []
    for pool in pools:
        build = pool.info.get("build")
        if not isinstance(build, dict) or "steps" not in build:
            raise InputError(f"pool {pool.name!r}: {REMEDY}", path=str(pool.partition.stats))
        builds.append(build)
    first = shared_steps(builds[0])
    for pool, build in zip(pools[1:], builds[1:], strict=True):
        other = shared_steps(build)
        for step, value in other.items():
            if value != first.get(step):
                raise InputError(
                    f"pools {pools[0].name!r} and {pool.name!r} were built with different "
                    f"{step} settings or inputs: {REMEDY}",
                    path=str(pool.partition.stats),
                )
    return construction_parameters(builds[0])


def make_splits(
    run: RunLayout,
    plan: SplitPlan,
    record: StepRecord,
    *,
    evaluation: Callable[[Path], object] | None = None,
) -> StepStats:
    """Read the pools' partitions, write every split's questions and instances, then stats.

    `evaluation` writes files that evaluate the test split into the splits folder before the
    stats file (the lm-evaluation-harness task, `tipqa.lmeval_task.task_files.write_task_folder`).
    """
    pools = [read_pool(name, run.pool(name).partition_files) for name in plan.used_pools]
    parameters = agreed_parameters(pools)
    membership, validation = assign_splits(pools[0], pools[1] if len(pools) > 1 else None, plan)
    layout = SplitsLayout(run.splits)
    names = plan.splits
    counts = write_split_files(pools, membership, names, layout)
    folders = [pool.partition.root for pool in pools]
    judged = split_relevance(folders, membership, names, layout.root)
    for stale in set(SPLITS) - set(names):
        shutil.rmtree(layout.folder(stale), ignore_errors=True)
    stats = StepStats(Step.SPLITS, provenance=record.provenance())
    sources = {"test": plan.test_pool, "train": plan.train_pool}
    sources["validation"] = plan.train_pool
    summary: dict[str, Any] = {}
    for name in names:
        pairs, relevance = counts[name]["pairs"], counts[name]["instances"]
        labels = Counter(label for label, _ in pairs)
        summary[name] = {
            "pool": sources[name],
            "questions": len(pairs),
            **{label: labels.get(label, 0) for label in SPLIT_LABELS},
            "by_stage": _by_stage(pairs),
            "instances": sum(relevance.values()),
            "instance_relevance": {k: relevance.get(k, 0) for k in ("yes", "no", "unknown")},
        }
        for label in SPLIT_LABELS:
            stats.add(f"{name}.{label}", labels.get(label, 0))
        stats.add(f"{name}.instances", summary[name]["instances"])
    stats.info.update(
        protocol={
            "test_pool": plan.test_pool,
            "train_pool": plan.train_pool,
            "validation_per_label": plan.validation_per_label,
            "seed": plan.seed,
        },
        splits=summary,
        pools={pool.name: pool.summary() for pool in pools},
        validation=validation,
        parameters=parameters,
        relevance=judged,
    )
    if validation and validation["short"]:
        _report_short(stats, validation)
    if evaluation is not None and summary.get("test", {}).get("questions"):
        evaluation(layout.root)
    stats.write(layout.stats)
    return stats


def _report_short(stats: StepStats, validation: dict[str, Any]) -> None:
    """Count and log a validation sample smaller than asked for."""
    missing = validation["requested_per_label"] - validation["taken_per_label"]
    stats.add("validation.short_per_label", missing)
    log.warning(
        "validation split: %d per label requested, only %d available (answerable %d, "
        "unanswerable %d)",
        validation["requested_per_label"],
        validation["taken_per_label"],
        validation["available"]["answerable"],
        validation["available"]["unanswerable"],
    )
