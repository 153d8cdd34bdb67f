"""Sampling: strata, exclusions, spread over questions, doubles, balance, reproducibility."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from random import Random

import pytest

from tipqa.annotation.items import AnnotationItem, annotator_names
from tipqa.annotation.sampling import (
    SamplingSettings,
    allocate,
    assign,
    proportional,
    sample_pool,
    spread_over_questions,
)
from tipqa.core.errors import ConfigError
from tipqa.core.stats import StepStats


def _item(n: int, question: int, label: str = "answerable", stage: str = "token") -> AnnotationItem:
    return AnnotationItem(
        f"q{question}",
        "Q?",
        "A",
        ["A"],
        ["k"],
        stage,
        f"d{n}",
        f"d{n}@w0",
        f"it-{n:05d}",
        "no",
        "t",
        label,
        False,
    )


def test_allocate_splits_equally_and_passes_shortfalls_on() -> None:
    assert allocate(10, {"a": 50, "b": 50}) == {"a": 5, "b": 5}
    assert allocate(11, {"a": 50, "b": 50}) == {"a": 6, "b": 5}
    assert allocate(10, {"a": 2, "b": 50}) == {"a": 2, "b": 8}
    assert allocate(10, {"a": 2, "b": 3}) == {"a": 2, "b": 3}
    assert allocate(9, {"a": 0, "b": 4, "c": 9}) == {"a": 0, "b": 4, "c": 5}


def test_proportional_uses_largest_remainders() -> None:
    assert proportional(200, {"x": 350, "y": 350}) == {"x": 100, "y": 100}
    assert proportional(3, {"x": 1, "y": 1, "z": 2}) == {"x": 1, "y": 1, "z": 1}
    assert proportional(5, {"a": 1, "b": 3}) == {"a": 1, "b": 4}
    assert sum(proportional(7, {"a": 3, "b": 5, "c": 11}).values()) == 7


def test_strata_are_half_per_label_and_stage_and_half_evidence(make_pool) -> None:
    pool = make_pool()
    stats = StepStats("t")
    sample = sample_pool(pool.layout, SamplingSettings(80, 20, 4, seed=1), stats)
    drawn = sample.counts["sampled_by_group"]
    assert drawn == {
        "answerable/token/evidence": 10,
        "answerable/token/other": 10,
        "answerable/vector/evidence": 10,
        "answerable/vector/other": 10,
        "unanswerable/token/other": 20,
        "unanswerable/vector/other": 20,
    }
    by_label = Counter(i.final_label for i in sample.items)
    assert by_label == {"answerable": 40, "unanswerable": 40}
    evidence = [i for i in sample.items if i.evidence]
    assert evidence and all(i.judge_label == "yes" for i in evidence)
    assert all(i.judge_label == "no" for i in sample.items if i.final_label == "unanswerable")


def test_excluded_labels_and_failed_judgments_are_never_sampled(make_pool) -> None:
    pool = make_pool()
    stats = StepStats("t")
    sample = sample_pool(pool.layout, SamplingSettings(1000, 0, 3), stats)
    assert len(sample.items) == stats.counts["population"] < 1000
    assert {pool.labels[i.question_id] for i in sample.items} == {"answerable", "unanswerable"}
    assert all(i.judge_label in ("yes", "no") for i in sample.items)
    assert stats.counts["judgments_failed_not_sampled"] == 12  # one per vector-answered question
    assert stats.counts["judgments_excluded_discarded"] == 4 * 5
    assert stats.counts["judgments_excluded_undetermined"] == 3 * 2
    assert stats.errors["population_smaller_than_requested"] == 1


def test_a_small_stratum_gives_all_it_has_and_the_rest_comes_from_its_siblings(make_pool) -> None:
    pool = make_pool(vector_answerable=2)
    sample = sample_pool(pool.layout, SamplingSettings(80, 0, 2), StepStats("t"))
    drawn = sample.counts["sampled_by_group"]
    assert drawn["answerable/vector/evidence"] == 2
    assert drawn["answerable/vector/evidence"] + drawn["answerable/vector/other"] <= 20
    assert sum(v for k, v in drawn.items() if k.startswith("answerable")) == 40
    assert len(sample.items) == 80


def test_items_spread_over_questions_before_repeating_one() -> None:
    items = [_item(n, question=n % 5) for n in range(40)]
    chosen = spread_over_questions(items, 7, Random(0))
    counts = Counter(i.question_id for i in chosen)
    assert len(counts) == 5 and max(counts.values()) == 2 and min(counts.values()) == 1


def test_same_seed_same_sample_other_seed_other_sample(make_pool) -> None:
    pool = make_pool()

    def run(seed: int) -> list[tuple[str, tuple[str, ...]]]:
        settings = SamplingSettings(60, 20, 5, seed=seed)
        sample = sample_pool(pool.layout, settings, StepStats("t"))
        return [(i.item_id, tuple(i.annotators)) for i in sample.items]

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_double_items_cover_distinct_pairs_evenly_and_loads_balance() -> None:
    items = [_item(n, question=n // 3, stage=("token", "vector")[n % 2]) for n in range(700)]
    names = annotator_names(10)
    double = {i.item_id for i in items[::3][:200]}
    assigned = assign(items, double, names, Random(1))
    doubles = [tuple(sorted(assigned[i])) for i in double]
    assert all(len(set(p)) == 2 for p in doubles)
    pair_use = Counter(doubles)
    assert set(pair_use) == set(combinations(names, 2))
    assert set(pair_use.values()) <= {4, 5}
    load = Counter(a for people in assigned.values() for a in people)
    assert sum(load.values()) == 900
    assert max(load.values()) - min(load.values()) <= 1
    assert all(len(assigned[i.item_id]) == 1 for i in items if i.item_id not in double)


def test_double_subset_follows_the_strata(make_pool) -> None:
    pool = make_pool()
    sample = sample_pool(pool.layout, SamplingSettings(80, 20, 4, seed=2), StepStats("t"))
    assert sample.counts["double_by_stratum"] == {
        "answerable/token": 5,
        "answerable/vector": 5,
        "unanswerable/token": 5,
        "unanswerable/vector": 5,
    }
    assert sum(len(i.annotators) == 2 for i in sample.items) == 20
    assert set(sample.counts["load_by_annotator"].values()) == {25}


@pytest.mark.parametrize(
    "settings",
    [SamplingSettings(10, 11, 3), SamplingSettings(10, 2, 1), SamplingSettings(0, 0, 3)],
)
def test_inconsistent_settings_are_config_errors(make_pool, settings) -> None:
    pool = make_pool()
    with pytest.raises(ConfigError, match="annotation"):
        sample_pool(pool.layout, settings, StepStats("t"))
