"""Which triplets people annotate, and who annotates each.

**Population.** One candidate triplet per judgment of a finished pool that has a yes/no label
(a judgment that failed, label None, is never sampled), for the questions whose final label is
*answerable* or *unanswerable*. Questions labelled *discarded* (more than k1 matches, all judged
no) or *undetermined* (some judgment failed) are left out: their label is not a claim about the
corpus that the annotation could check. A triplet is the question with its answer, and the text
the judge saw: a token-stage judge window (``<doc_id>@w<index>``) or a vector-stage chunk.

**Strata.** Triplets are grouped by the question's final label and by the judgment's stage
(token / vector). As in the paper, half of the sample comes from answerable questions and half
from unanswerable ones; within a label, half from each stage. Within an answerable stratum, half
of its share goes to *evidence* triplets (the judgment that made the question answerable) and
half to the *other* judged candidates of answerable questions at that stage (documents judged
before the evidence, other chunks, and the token documents of questions answered only by
vector search), so that the sample holds both "yes" and "no" verdicts of both stages.
Unanswerable questions only have "no" verdicts. A group smaller than its share gives all it
has and its shortfall goes, in equal parts, to its siblings (the other part, then the other
stage, then the other label); the counts sampled per group are reported in the manifest.

**Spread.** Inside a group, questions are taken in a random order and each gives one random
triplet; a question gives a second triplet only after every question of the group gave one.

**Double annotation and assignment.** The doubly annotated subset is drawn from the sample in
proportion to the strata. Each double item goes to the pair of distinct annotators used least
so far (then: with the smallest load), so double items are spread over all pairs; the single
items then go one by one to the least loaded annotator. Loads differ by at most one item when
the single items suffice to even them out. Everything is drawn from one `random.Random(seed)`
over inputs sorted by id, so the same pool and seed give the same sample and assignment.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from random import Random
from typing import Any

from tipqa.annotation.items import AnnotationItem, annotator_names, item_id
from tipqa.core.errors import ConfigError
from tipqa.core.jsonl import iter_records, read_records
from tipqa.core.layout import PoolLayout
from tipqa.core.records import Judgment, LabeledQuestion
from tipqa.core.stats import StepStats

SAMPLED_LABELS = ("answerable", "unanswerable")
EXCLUDED_LABELS = ("discarded", "undetermined")
STAGES = ("token", "vector")
JUDGMENT_FILES = {"token": "token_judgments", "vector": "vector_judgments"}


@dataclass(frozen=True)
class SamplingSettings:
    """How many triplets, how many of them doubly annotated, by how many people, which seed."""

    triplets: int = 700
    double: int = 200
    annotators: int = 10
    seed: int = 0

    def check(self) -> None:
        """Raise ConfigError when the numbers cannot work together."""
        if self.triplets < 1 or self.annotators < 1 or self.double < 0:
            raise ConfigError("annotation: triplets and annotators must be >= 1, double >= 0")
        if self.double > self.triplets:
            raise ConfigError(
                f"annotation: double={self.double} is more than triplets={self.triplets}"
            )
        if self.double and self.annotators < 2:
            raise ConfigError("annotation: double annotation needs at least 2 annotators")


@dataclass
class Sample:
    """The sampled items (annotators filled in) and the counts behind them."""

    items: list[AnnotationItem]
    annotators: list[str]
    counts: dict[str, Any] = field(default_factory=dict)


def _part(item: AnnotationItem) -> str:
    return "evidence" if item.evidence else "other"


def collect_population(pool: PoolLayout, stats: StepStats) -> list[AnnotationItem]:
    """Every yes/no judgment of the pool's answerable and unanswerable questions (no text yet)."""
    questions: dict[str, LabeledQuestion] = {}
    for label in SAMPLED_LABELS:
        for row in read_records(pool.partition_files.labelled(label), LabeledQuestion):
            questions[row.id] = row
    excluded: dict[str, str] = {}
    for label in EXCLUDED_LABELS:
        path = pool.partition_files.labelled(label)
        if path.exists():
            excluded.update({row.id: label for row in read_records(path, LabeledQuestion)})
    seen: set[str] = set()
    population: list[AnnotationItem] = []
    for shard in pool.shard_folders():
        for stage, name in JUDGMENT_FILES.items():
            path = shard.data(name)
            if not path.exists():
                continue
            for judgment in iter_records(path, Judgment):
                item = _candidate(judgment, stage, questions, excluded, stats)
                if item is None:
                    continue
                if item.item_id in seen:
                    stats.error("duplicate_judged_unit")
                    continue
                seen.add(item.item_id)
                population.append(item)
    stats.add("population", len(population))
    return population


def _candidate(
    judgment: Judgment,
    stage: str,
    questions: dict[str, LabeledQuestion],
    excluded: dict[str, str],
    stats: StepStats,
) -> AnnotationItem | None:
    """The candidate triplet of one judgment, or None (counted) when it cannot be sampled."""
    stats.add("judgments_read")
    row = questions.get(judgment.question_id)
    if row is None:
        label = excluded.get(judgment.question_id, "unlabelled")
        stats.add(f"judgments_excluded_{label}")
        return None
    if judgment.label not in ("yes", "no"):
        stats.add("judgments_failed_not_sampled")
        return None
    evidence = row.evidence
    is_evidence = bool(
        evidence and evidence.stage == stage and evidence.unit_id == judgment.unit_id
    )
    return AnnotationItem(
        item_id=item_id(row.id, stage, judgment.unit_id),
        question_id=row.id,
        question=row.question,
        answer=row.answer,
        aliases=list(row.aliases),
        keywords=list(row.keywords),
        stage=stage,  # type: ignore[arg-type]
        doc_id=judgment.doc_id,
        unit_id=judgment.unit_id,
        judge_label=judgment.label,
        judge=judgment.judge,
        final_label=row.label,
        evidence=is_evidence,
    )


def allocate(total: int, capacities: dict[str, int]) -> dict[str, int]:
    """Split `total` into equal shares capped by `capacities`; a shortfall goes to the others.

    The remainder of an uneven split goes to the groups listed first.
    """
    alloc = dict.fromkeys(capacities, 0)
    remaining = min(total, sum(capacities.values()))
    open_groups = [k for k, cap in capacities.items() if cap > 0]
    while remaining > 0 and open_groups:
        share, extra = divmod(remaining, len(open_groups))
        for i, key in enumerate(open_groups):
            give = min(share + (1 if i < extra else 0), capacities[key] - alloc[key])
            alloc[key] += give
            remaining -= give
        open_groups = [k for k in open_groups if alloc[k] < capacities[k]]
    return alloc


def proportional(total: int, sizes: dict[str, int]) -> dict[str, int]:
    """Split `total` in proportion to `sizes` (largest remainders; ties to the groups first)."""
    whole = sum(sizes.values())
    if whole == 0:
        return dict.fromkeys(sizes, 0)
    exact = {k: total * size / whole for k, size in sizes.items()}
    shares = {k: int(value) for k, value in exact.items()}
    order = sorted(sizes, key=lambda k: -(exact[k] - shares[k]))
    for key in order[: total - sum(shares.values())]:
        shares[key] += 1
    return shares


def spread_over_questions(items: list[AnnotationItem], n: int, rng: Random) -> list[AnnotationItem]:
    """`n` items taken question by question in random order, one per question per round."""
    by_question: dict[str, list[AnnotationItem]] = defaultdict(list)
    for item in sorted(items, key=lambda i: (i.question_id, i.stage, i.unit_id)):
        by_question[item.question_id].append(item)
    order = sorted(by_question)
    rng.shuffle(order)
    for question_id in order:
        rng.shuffle(by_question[question_id])
    chosen: list[AnnotationItem] = []
    depth = 0
    while len(chosen) < n:
        for question_id in order:
            if depth < len(by_question[question_id]) and len(chosen) < n:
                chosen.append(by_question[question_id][depth])
        depth += 1
    return chosen


def stratified_sample(
    population: list[AnnotationItem], total: int, rng: Random
) -> tuple[list[AnnotationItem], dict[str, int]]:
    """Draw `total` items: half per label, half per stage, half evidence in answerable strata."""
    groups: dict[tuple[str, str, str], list[AnnotationItem]] = defaultdict(list)
    for item in population:
        groups[(item.final_label, item.stage, _part(item))].append(item)

    def size(*prefix: str) -> int:
        return sum(len(v) for k, v in groups.items() if k[: len(prefix)] == prefix)

    chosen: list[AnnotationItem] = []
    drawn: dict[str, int] = {}
    by_label = allocate(total, {label: size(label) for label in SAMPLED_LABELS})
    for label in SAMPLED_LABELS:
        by_stage = allocate(by_label[label], {stage: size(label, stage) for stage in STAGES})
        for stage in STAGES:
            parts = ("evidence", "other") if label == "answerable" else ("other",)
            by_part = allocate(by_stage[stage], {part: size(label, stage, part) for part in parts})
            for part in parts:
                picked = spread_over_questions(groups[(label, stage, part)], by_part[part], rng)
                drawn[f"{label}/{stage}/{part}"] = len(picked)
                chosen.extend(picked)
    return chosen, drawn


def pick_double(items: list[AnnotationItem], double: int, rng: Random) -> set[str]:
    """The ids of the doubly annotated items: drawn per stratum in proportion to its size."""
    strata: dict[str, list[AnnotationItem]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i.item_id):
        strata[item.stratum].append(item)
    keys = sorted(strata)
    shares = proportional(min(double, len(items)), {k: len(strata[k]) for k in keys})
    return {item.item_id for k in keys for item in rng.sample(strata[k], shares[k])}


def assign(
    items: list[AnnotationItem], double_ids: set[str], annotators: list[str], rng: Random
) -> dict[str, list[str]]:
    """Who annotates each item: double items to the least used pair, the rest to the least busy."""
    load = dict.fromkeys(annotators, 0)
    pair_use: Counter[tuple[str, str]] = Counter()
    pairs = list(combinations(annotators, 2))
    rng.shuffle(pairs)
    ordered = sorted(items, key=lambda i: i.item_id)
    rng.shuffle(ordered)
    out: dict[str, list[str]] = {}
    for item in (i for i in ordered if i.item_id in double_ids):
        pair = min(pairs, key=lambda p: (pair_use[p], load[p[0]] + load[p[1]]))
        pair_use[pair] += 1
        first, second = pair if rng.random() < 0.5 else pair[::-1]
        out[item.item_id] = [first, second]
        load[first] += 1
        load[second] += 1
    people = list(annotators)
    rng.shuffle(people)
    for item in (i for i in ordered if i.item_id not in double_ids):
        person = min(people, key=lambda a: load[a])
        out[item.item_id] = [person]
        load[person] += 1
    return out


def _count(items: Iterable[AnnotationItem], key: Callable[[AnnotationItem], str]) -> dict[str, int]:
    return dict(sorted(Counter(key(i) for i in items).items()))


def draw_sample(
    population: list[AnnotationItem], settings: SamplingSettings, stats: StepStats
) -> Sample:
    """The stratified sample, its double subset and the assignment, reproducible by seed."""
    settings.check()
    rng = Random(settings.seed)
    ordered = sorted(population, key=lambda i: i.item_id)
    chosen, drawn = stratified_sample(ordered, settings.triplets, rng)
    double_ids = pick_double(chosen, settings.double, rng)
    people = annotator_names(settings.annotators)
    assignment = assign(chosen, double_ids, people, rng)
    for item in chosen:
        item.annotators = assignment[item.item_id]
    stats.add("sampled", len(chosen))
    stats.add("double", len(double_ids))
    if len(chosen) < settings.triplets:
        stats.error("population_smaller_than_requested")
    counts = {
        "requested": settings.triplets,
        "sampled": len(chosen),
        "double": len(double_ids),
        "population_by_group": _count(
            population, lambda i: f"{i.final_label}/{i.stage}/{_part(i)}"
        ),
        "sampled_by_group": drawn,
        "sampled_by_judge_label": _count(chosen, lambda i: i.judge_label),
        "double_by_stratum": _count(
            (i for i in chosen if i.item_id in double_ids), lambda i: i.stratum
        ),
        "load_by_annotator": {
            person: sum(person in i.annotators for i in chosen) for person in people
        },
        "questions": len({i.question_id for i in chosen}),
    }
    return Sample(sorted(chosen, key=lambda i: i.item_id), people, counts)


def sample_pool(pool: Path | PoolLayout, settings: SamplingSettings, stats: StepStats) -> Sample:
    """Collect the population of a finished pool and draw the sample."""
    layout = pool if isinstance(pool, PoolLayout) else PoolLayout(Path(pool))
    return draw_sample(collect_population(layout, stats), settings, stats)
