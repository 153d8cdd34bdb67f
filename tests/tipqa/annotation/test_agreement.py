"""Agreement statistics: joining labels to items, bootstrap intervals, undefined cases."""

from __future__ import annotations

from random import Random

import pytest

from tipqa.annotation.agreement import alpha, bootstrap, compute_agreement, join, kappa, percent
from tipqa.annotation.items import Annotation, AnnotationItem
from tipqa.core.errors import InputError

A, B = "annotator-01", "annotator-02"


def _items(n: int, judge: list[str], double_every: int = 2) -> list[AnnotationItem]:
    return [
        AnnotationItem(
            f"q{i}",
            "Q",
            "A",
            ["A"],
            [],
            ("token", "vector")[i % 2],
            "d",
            "u",
            f"it-{i:03d}",
            judge[i % len(judge)],
            "t",
            ("answerable", "unanswerable")[(i // 2) % 2],
            False,
            "text",
            [A, B] if i % double_every == 0 else [(A, B)[i % 2]],
        )
        for i in range(n)
    ]


def _agreeing(items: list[AnnotationItem]) -> list[Annotation]:
    return [Annotation(i.item_id, p, i.judge_label) for i in items for p in i.annotators]


def test_join_rejects_missing_and_stray_labels() -> None:
    items = _items(4, ["yes", "no"])
    labels = _agreeing(items)
    with pytest.raises(InputError, match="item it-000 has no label from annotator-02"):
        join(items, [a for a in labels if (a.item_id, a.annotator) != ("it-000", B)])
    with pytest.raises(InputError, match="annotation of unknown item it-999"):
        join(items, [*labels, Annotation("it-999", A, "yes")])


@pytest.mark.needs("krippendorff")
def test_perfect_agreement_has_degenerate_intervals() -> None:
    items = _items(40, ["yes", "no", "no"])
    report = compute_agreement(items, _agreeing(items), [A, B], resamples=50, seed=0)
    for block in (report["llm_human"], report["inter_annotator"]):
        assert block["agreement"] == {
            "value": 100.0,
            "ci95": [100.0, 100.0],
            "undefined_resamples": 0,
        }
        assert block["kappa"]["value"] == 1.0 and block["kappa"]["ci95"] == [1.0, 1.0]
    assert report["krippendorff_alpha"]["humans"]["value"] == pytest.approx(1.0)
    assert report["disagreements"] == []


@pytest.mark.needs("krippendorff")
def test_intervals_are_reproducible_by_seed_and_narrow_with_more_items() -> None:
    rng = Random(3)

    def noisy(n: int) -> tuple[list[AnnotationItem], list[Annotation]]:
        items = _items(n, ["yes", "no"])
        labels = [
            Annotation(i.item_id, p, i.judge_label if rng.random() < 0.8 else "yes")
            for i in items
            for p in i.annotators
        ]
        return items, labels

    small, small_labels = noisy(30)
    first = compute_agreement(small, small_labels, [A, B], resamples=80, seed=5)
    again = compute_agreement(small, small_labels, [A, B], resamples=80, seed=5)
    other = compute_agreement(small, small_labels, [A, B], resamples=80, seed=6)
    assert first["llm_human"] == again["llm_human"]
    assert first["llm_human"]["agreement"]["ci95"] != other["llm_human"]["agreement"]["ci95"]
    big, big_labels = noisy(300)
    wide = compute_agreement(big, big_labels, [A, B], resamples=80, seed=5)

    def width(report: dict) -> float:
        low, high = report["llm_human"]["agreement"]["ci95"]
        assert low <= report["llm_human"]["agreement"]["value"] <= high
        return high - low

    assert width(wide) < width(first)


@pytest.mark.needs("krippendorff")
def test_undefined_statistics_are_none() -> None:
    assert percent([], []) is None and kappa([], []) is None
    assert kappa(["no", "no"], ["no", "no"]) is None
    single = _items(6, ["yes", "no"], double_every=1000)[1:]
    rated = join(single, _agreeing(single))
    assert alpha(rated, [A, B], with_judge=False) is None
    assert alpha(rated, [A, B], with_judge=True) == pytest.approx(1.0)
    result = bootstrap(rated, {"k": lambda r: None}, resamples=10, seed=0)
    assert result == {"k": {"value": None, "ci95": None, "undefined_resamples": 10}}
