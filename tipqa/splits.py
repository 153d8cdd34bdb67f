"""The benchmark's splits, as in the paper's table 2: test from one pool, train and validation
from another.

The test split is every answerable and unanswerable question of the test pool (TriviaQA's dev
set in the paper). The validation split is a seeded, balanced sample of `validation_per_label`
answerable and as many unanswerable questions of the train pool (TriviaQA's train set); the train
split is the rest of that pool. Discarded and undetermined questions stay out of every split but
are counted. Without a train pool only the test split is made.

Files under the splits folder: `<split>/questions.jsonl` (`LabeledQuestion`),
`<split>/instances.jsonl` (the vector-stage `VectorInstance`s of the split's questions) and
`stats.json`, written last.
"""

from __future__ import annotations

import contextlib
import logging
import random
import shutil
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tipqa.errors import ConfigError, InputError
from tipqa.jsonl import atomic_open, iter_records, read_json
from tipqa.records import LABELS, LabeledQuestion, VectorInstance
from tipqa.stats import StageStats

log = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("train", "validation", "test")
SPLIT_LABELS: tuple[str, ...] = ("answerable", "unanswerable")
LEFT_OUT: tuple[str, ...] = ("discarded", "undetermined")


@dataclass(frozen=True)
class SplitProtocol:
    """Which pool feeds which split, the validation size per label, and the sampling seed."""

    test_pool: str
    train_pool: str | None = None
    validation_per_label: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.validation_per_label < 0:
            raise ConfigError("[splits] validation_per_label must be 0 or more")
        if self.train_pool is not None and self.train_pool == self.test_pool:
            raise ConfigError(
                f"[splits] test_pool and train_pool are both {self.test_pool!r}: "
                "the test split must come from another pool than train and validation"
            )

    @classmethod
    def configured(
        cls,
        test_pool: str,
        train_pool: str,
        validation_per_label: int,
        seed: int,
        pools: Iterable[str],
    ) -> SplitProtocol:
        """The protocol for the configured pools: an absent or empty train pool means test only."""
        pools = list(pools)
        if test_pool not in pools:
            raise ConfigError(
                f"[splits] test_pool {test_pool!r} is not a configured question pool; "
                f"[questions] pools: {', '.join(pools) or 'none'}"
            )
        train = train_pool if train_pool and train_pool in pools else None
        if train_pool and train is None:
            log.info("train pool %r is not configured: only the test split is made", train_pool)
        return cls(test_pool, train, validation_per_label, seed)

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits this protocol makes."""
        return SPLITS if self.train_pool is not None else ("test",)


@dataclass
class PoolIndex:
    """One pool's partition as read back, lightly: (id, label, stage) of every question."""

    name: str
    folder: Path
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


def read_pool(name: str, folder: Path) -> PoolIndex:
    """Index a pool's partition folder (one JSONL file per label, instances, stats)."""
    folder = Path(folder)
    for path in [*(folder / f"{label}.jsonl" for label in LABELS), folder / "stats.json"]:
        if not path.is_file():
            raise InputError(f"pool {name!r} has no partition file here", path=str(path))
    entries = []
    for label in LABELS:
        path = folder / f"{label}.jsonl"
        for row in iter_records(path, LabeledQuestion):
            if row.label != label:
                raise InputError(
                    f"question {row.id} is labelled {row.label!r}", path=str(path), field="label"
                )
            entries.append((row.id, row.label, row.stage))
    stats = read_json(folder / "stats.json")
    info = stats.get("info", {}) if isinstance(stats, dict) else {}
    return PoolIndex(name, folder, entries, info)


@dataclass(frozen=True)
class SplitsLayout:
    """The files of the splits folder."""

    root: Path

    def questions(self, split: str) -> Path:
        """The labelled questions of `split`."""
        return self.root / split / "questions.jsonl"

    def instances(self, split: str) -> Path:
        """The vector-stage instances of `split`'s questions."""
        return self.root / split / "instances.jsonl"

    @property
    def stats(self) -> Path:
        """The split statistics (table 2 of the paper, and more), written last."""
        return self.root / "stats.json"


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
    test: PoolIndex, train: PoolIndex | None, protocol: SplitProtocol
) -> tuple[dict[str, str], dict[str, Any] | None]:
    """Each split question's split by id, and the validation sample's info (None without train).

    A question id in both pools is an InputError: the splits must be disjoint.
    """
    membership = {qid: "test" for label in SPLIT_LABELS for qid in test.ids(label)}
    if train is None:
        return membership, None
    answerable, unanswerable = train.ids("answerable"), train.ids("unanswerable")
    validation, info = sample_validation(
        answerable, unanswerable, protocol.validation_per_label, protocol.seed
    )
    for qid in [*answerable, *unanswerable]:
        split = "validation" if qid in validation else "train"
        if qid in membership:
            raise InputError(
                f"question id {qid!r} is in split {membership[qid]!r} and in split {split!r}: "
                f"pools {test.name!r} and {train.name!r} share questions",
                path=str(train.folder),
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
                for row in iter_records(pool.folder / f"{label}.jsonl", LabeledQuestion):
                    split = membership[row.id]
                    questions[split].write(orjson.dumps(row.to_dict()) + b"\n")
                    counts[split]["pairs"].append((row.label, row.stage))
            path = pool.folder / "instances.jsonl"
            for instance in iter_records(path, VectorInstance) if path.is_file() else []:
                split = membership.get(instance.question_id)
                if split is not None:
                    instances[split].write(orjson.dumps(instance.to_dict()) + b"\n")
                    relevant = instance.relevant
                    kind = "unknown" if relevant is None else ("yes" if relevant else "no")
                    counts[split]["instances"][kind] += 1
    return counts


OFFLINE_BACKENDS = {"rules"}


def construction_parameters(info: dict[str, Any]) -> dict[str, Any]:
    """The build settings that define a partition (from its stats' info), for the card."""
    build, corpus = _section(info, "build"), _section(info, "corpus")
    embedder, judge = _section(info, "embedder"), _section(info, "judge")
    params: dict[str, Any] = {
        "tipqa_version": info.get("tipqa_version"),
        "schema_version": info.get("schema_version"),
        "k1": build.get("k1"),
        "k2": build.get("k2"),
        "corpus": {k: corpus.get(k) for k in ("source", "paths", "name", "config", "split")},
        "token_index": _section(info, "token_index").get("backend"),
        "vector_index": _section(info, "vector_index").get("backend"),
        "embedder": {
            k: embedder.get(k) for k in ("backend", "model", "query_prefix", "passage_prefix")
        },
        "keywords": _llm_settings(_section(info, "keywords")),
        "judge": {
            **_llm_settings(judge),
            **{k: judge.get(k) for k in ("max_words", "max_windows")},
        },
    }
    if judge.get("backend") == "vllm":
        params["judge"]["mode"] = judge.get("mode")
    return params


def _section(info: dict[str, Any], name: str) -> dict[str, Any]:
    value = info.get(name)
    return value if isinstance(value, dict) else {}


def _llm_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Backend, and for an LLM backend its model, prompt template and the template's SHA-256."""
    backend = settings.get("backend")
    out: dict[str, Any] = {"backend": backend}
    if backend and backend not in OFFLINE_BACKENDS:
        from tipqa.llm.prompts import load_template

        prompt = settings.get("prompt")
        out.update(model=settings.get("model"), prompt=prompt)
        out["prompt_sha256"] = load_template(prompt).sha256 if prompt else None
    return out


def agreed_parameters(pools: list[PoolIndex]) -> dict[str, Any]:
    """The pools' common construction parameters; a pool built otherwise is a ConfigError."""
    params = [construction_parameters(pool.info) for pool in pools]
    for pool, other in zip(pools[1:], params[1:], strict=True):
        for key, value in other.items():
            if value != params[0][key]:
                raise ConfigError(
                    f"pools {pools[0].name!r} and {pool.name!r} were built with different "
                    f"{key}: {params[0][key]!r} vs {value!r}; rebuild one of them"
                )
    return params[0]


def make_splits(
    test_folder: Path, train_folder: Path | None, protocol: SplitProtocol, out: Path
) -> StageStats:
    """Read the pools' partitions, write every split's questions and instances, then stats."""
    if (train_folder is None) != (protocol.train_pool is None):
        raise ConfigError("a train partition folder goes with a train pool, and only then")
    pools = [read_pool(protocol.test_pool, test_folder)]
    if train_folder is not None and protocol.train_pool is not None:
        pools.append(read_pool(protocol.train_pool, train_folder))
    parameters = agreed_parameters(pools)
    membership, validation = assign_splits(pools[0], pools[1] if len(pools) > 1 else None, protocol)
    layout = SplitsLayout(Path(out))
    names = protocol.splits
    counts = write_split_files(pools, membership, names, layout)
    for stale in set(SPLITS) - set(names):
        shutil.rmtree(layout.root / stale, ignore_errors=True)
    stats = StageStats("splits")
    sources = {"test": protocol.test_pool, "train": protocol.train_pool}
    sources["validation"] = protocol.train_pool
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
            "test_pool": protocol.test_pool,
            "train_pool": protocol.train_pool,
            "validation_per_label": protocol.validation_per_label,
            "seed": protocol.seed,
        },
        splits=summary,
        pools={pool.name: pool.summary() for pool in pools},
        validation=validation,
        parameters=parameters,
    )
    if validation and validation["short"]:
        _report_short(stats, validation)
    stats.write(layout.stats)
    return stats


def _report_short(stats: StageStats, validation: dict[str, Any]) -> None:
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
