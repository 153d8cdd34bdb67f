"""The benchmark's splits, as in the paper's table 2: test from one pool, train and validation
from another.

The test split is every answerable and unanswerable question of the test pool (TriviaQA's dev
set in the paper). The validation split is a seeded, balanced sample of `validation_per_label`
answerable and as many unanswerable questions of the train pool (TriviaQA's train set); the train
split is the rest of that pool. Discarded and undetermined questions stay out of every split but
are counted. Without a train pool only the test split is made.

Two readings of other steps join the partitions when configured: each question's verbatim
counts (`verbatim_docs`, `verbatim_with_alias`, from the pool's `verbatim.jsonl`), and, with
`[audit] apply`, the audit's findings, which move those questions to answerable with stage
`audit` and add the audit's judgments to the relevance files (`tipqa.audit`).

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
from tipqa.core.jsonl import atomic_open, iter_records, read_json, read_records
from tipqa.core.layout import PartitionLayout, PoolLayout, RunLayout, SplitsLayout
from tipqa.core.records import (
    LABELS,
    AuditFinding,
    JudgedUnit,
    Judgment,
    LabeledQuestion,
    VectorInstance,
    Verbatim,
)
from tipqa.core.settings import Settings, setting
from tipqa.core.stats import StepStats, read_stats
from tipqa.core.steps import Step
from tipqa.dataset.provenance import REMEDY, construction_parameters, shared_steps
from tipqa.dataset.qrels import judged_units, split_relevance

log = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("train", "validation", "test")
SPLIT_LABELS: tuple[str, ...] = ("answerable", "unanswerable")
LEFT_OUT: tuple[str, ...] = ("discarded", "undetermined")
AUDIT_SCHEMA_VERSION = 1
"""The version of `audit.json` this tipqa writes and reads."""

AUDITED: tuple[str, ...] = ("unanswerable", "discarded")
"""The labels the audit reads (`tipqa.audit`): its findings move questions from these."""


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
    """The splits to make: the test pool, the train pool (or None), and the settings; whether
    the pools' verbatim counts are read, and whether their audits' findings are applied."""

    test_pool: str
    train_pool: str | None
    validation_per_label: int
    seed: int
    verbatim: bool = False
    apply_audit: bool = False

    @classmethod
    def of(
        cls,
        settings: SplitSettings,
        pools: list[str],
        *,
        verbatim: bool = False,
        apply_audit: bool = False,
    ) -> SplitPlan:
        """The plan of these settings for the configured pools."""
        settings.check_pools(pools)
        train = settings.train(pools)
        return cls(
            settings.test_pool,
            train,
            settings.validation_per_label,
            settings.seed,
            verbatim,
            apply_audit,
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
    """One pool's partition as read back, lightly: (id, label, stage) of every question.

    `moved` holds the audit's findings when they are applied (the entries already carry
    their new label), `verbatim` the questions' verbatim counts when read.
    """

    name: str
    partition: PartitionLayout
    entries: list[tuple[str, str, str]]
    info: dict[str, Any] = field(default_factory=dict)
    moved: dict[str, AuditFinding] = field(default_factory=dict)
    verbatim: dict[str, Verbatim] = field(default_factory=dict)

    def row(self, row: LabeledQuestion) -> LabeledQuestion:
        """A partition row as the splits hold it: moved by the audit, with verbatim counts."""
        finding = self.moved.get(row.id)
        if finding is not None:
            row = finding.labeled(row)
        counts = self.verbatim.get(row.id)
        if counts is not None:
            row.verbatim_docs, row.verbatim_with_alias = counts.documents, counts.with_alias
        return row

    def ids(self, label: str) -> list[str]:
        """The ids of the questions with `label`, in file order."""
        return [qid for qid, item_label, _ in self.entries if item_label == label]

    def summary(self) -> dict[str, Any]:
        """Questions by label and by stage; discarded and undetermined are left out of splits."""
        labels = Counter(label for _, label, _ in self.entries)
        summary: dict[str, Any] = {
            "questions": len(self.entries),
            **{label: labels.get(label, 0) for label in LABELS},
            "by_stage": _by_stage((label, stage) for _, label, stage in self.entries),
            "left_out": sum(labels.get(label, 0) for label in LEFT_OUT),
        }
        if "judging" in self.info:
            summary["judging"] = self.info["judging"]
        if self.moved:
            moved = Counter[str](finding.label for finding in self.moved.values())
            summary["audit_moved"] = {label: moved.get(label, 0) for label in AUDITED}
        return summary


def _by_stage(pairs: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Counts by final label and deciding stage, e.g. {"answerable_token": 12, ...}."""
    return dict(sorted(Counter(f"{label}_{stage}" for label, stage in pairs).items()))


def read_pool(name: str, pool: PoolLayout, plan: SplitPlan) -> PoolIndex:
    """Index a pool's partition (one JSONL file per label, instances, stats), with its verbatim
    counts and its audit's findings as the plan says."""
    partition = pool.partition_files
    for path in [*(partition.labelled(label) for label in LABELS), partition.stats]:
        if not path.is_file():
            raise InputError(f"pool {name!r} has no partition file here", path=str(path))
    moved = audit_findings(pool) if plan.apply_audit else {}
    entries: list[tuple[str, str, str]] = []
    for label in LABELS:
        path = partition.labelled(label)
        for row in iter_records(path, LabeledQuestion):
            if row.label != label:
                raise InputError(
                    f"question {row.id} is labelled {row.label!r}", path=str(path), field="label"
                )
            finding = moved.get(row.id)
            entries.append(
                (row.id, "answerable", "audit") if finding else (row.id, label, row.stage)
            )
    stats = read_stats(partition.stats, REMEDY)
    info = stats.get("info", {})
    verbatim = (
        {v.question_id: v for v in read_records(pool.verbatim, Verbatim)} if plan.verbatim else {}
    )
    return PoolIndex(
        name, partition, entries, info if isinstance(info, dict) else {}, moved, verbatim
    )


def read_audit(pool: PoolLayout, fingerprint: str | None = None) -> dict[str, Any]:
    """The pool's `audit.json`; with `fingerprint`, checked to be the audit that it names."""
    if not pool.audit.is_file():
        raise InputError(f"the pool has not been audited: {REMEDY}", path=str(pool.audit))
    audit = read_json(pool.audit)
    if not isinstance(audit, dict) or audit.get("schema_version") != AUDIT_SCHEMA_VERSION:
        raise InputError(
            f"not a label audit of schema version {AUDIT_SCHEMA_VERSION} (this tipqa reads it)",
            path=str(pool.audit),
        )
    if not isinstance(audit.get("found"), list):
        raise InputError("not an audit file", path=str(pool.audit))
    if fingerprint is not None and audit.get("fingerprint") != fingerprint:
        raise InputError(f"an audit made with other settings: {REMEDY}", path=str(pool.audit))
    return audit


def audit_findings(pool: PoolLayout) -> dict[str, AuditFinding]:
    """The findings of the pool's audit, by question id (its `audit.json`)."""
    findings = [AuditFinding.from_dict(item) for item in read_audit(pool)["found"]]
    return {finding.id: finding for finding in findings}


def audit_units(pool: PoolLayout, counts: Counter[str]) -> list[JudgedUnit]:
    """The units the pool's audit judged, as the relevance files keep them."""
    return judged_units(read_records(pool.audit_judgments, Judgment), counts)


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
        name: {"pairs": [], "instances": Counter(), "verbatim": {}} for name in names
    }
    with contextlib.ExitStack() as stack:
        questions = {n: stack.enter_context(atomic_open(out.questions(n))) for n in names}
        instances = {n: stack.enter_context(atomic_open(out.instances(n))) for n in names}
        for pool in pools:
            labels = LABELS if pool.moved else SPLIT_LABELS
            for label in labels:
                for read in iter_records(pool.partition.labelled(label), LabeledQuestion):
                    split = membership.get(read.id)
                    if split is None:
                        continue
                    row = pool.row(read)
                    questions[split].write(orjson.dumps(row.to_dict()) + b"\n")
                    counts[split]["pairs"].append((row.label, row.stage))
                    if pool.verbatim:
                        _count_verbatim(counts[split]["verbatim"], row)
            path = pool.partition.instances
            for instance in iter_records(path, VectorInstance) if path.is_file() else []:
                target = membership.get(instance.question_id)
                if target is not None:
                    instances[target].write(orjson.dumps(instance.to_dict()) + b"\n")
                    relevant = instance.relevant
                    kind = "unknown" if relevant is None else ("yes" if relevant else "no")
                    counts[target]["instances"][kind] += 1
    return counts


def _count_verbatim(counts: dict[str, dict[str, int]], row: LabeledQuestion) -> None:
    """Count a split's question by label: found verbatim, and with an answer alias beside."""
    label = counts.setdefault(row.label, {"questions": 0, "in_corpus": 0, "with_alias": 0})
    label["questions"] += 1
    label["in_corpus"] += int(bool(row.verbatim_docs))
    label["with_alias"] += int(bool(row.verbatim_with_alias))


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
    pools = [read_pool(name, run.pool(name), plan) for name in plan.used_pools]
    parameters = agreed_parameters(pools)
    membership, validation = assign_splits(pools[0], pools[1] if len(pools) > 1 else None, plan)
    layout = SplitsLayout(run.splits)
    names = plan.splits
    counts = write_split_files(pools, membership, names, layout)
    folders = [pool.partition.root for pool in pools]
    audited: Counter[str] = Counter()
    added = {
        pool.partition.root: audit_units(run.pool(pool.name), audited)
        for pool in pools
        if plan.apply_audit
    }
    judged = split_relevance(folders, membership, names, layout.root, added)
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
    if plan.verbatim:
        stats.info["verbatim"] = {name: counts[name]["verbatim"] for name in names}
    if plan.apply_audit:
        stats.info["audit"] = {pool.name: _applied(run.pool(pool.name)) for pool in pools}
    if validation and validation["short"]:
        _report_short(stats, validation)
    if evaluation is not None and summary.get("test", {}).get("questions"):
        evaluation(layout.root)
    stats.write(layout.stats)
    return stats


def _applied(pool: PoolLayout) -> dict[str, Any]:
    """What the splits record of an audit they applied: its fingerprint, settings and moves."""
    audit = read_audit(pool)
    moved = Counter(item["label"] for item in audit["found"])
    return {
        "fingerprint": audit["fingerprint"],
        "settings": audit["settings"]["audit"],
        "moved": {label: moved.get(label, 0) for label in AUDITED},
    }


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
