"""Agreement of the judge with people, and of people with each other.

Definitions (the report states them too):

- **LLM-human**: one pair (judge label, human label) per annotation, so a doubly annotated item
  gives two pairs. Agreement is the percentage of equal pairs; Cohen's kappa is computed on the
  same pairs (scikit-learn), with the judge as the first rater.
- **Inter-annotator**: one pair per doubly annotated item, (first, second) annotator in the
  order of the assignment. Percentage and Cohen's kappa as above.
- **Krippendorff's alpha** (nominal, package `krippendorff`): every annotator a coder, every
  item a unit (units with one value do not count); once among people only, once with the
  judge added as one more coder.
- **Bootstrap 95% CIs**: items are resampled with replacement (`resamples` times, a seeded
  numpy generator) and every statistic is recomputed; the interval holds the 2.5th and
  97.5th percentiles. A statistic that is undefined in a resample (kappa when only one label
  occurs) is left out of it, and the number left out is reported. The same resamples serve
  every statistic of one group.
- Undefined statistics are reported as null.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tipqa.annotation.items import Annotation, AnnotationItem
from tipqa.core.agreement import LABELS, bootstrap, kappa
from tipqa.core.errors import InputError

JUDGE = "judge"


@dataclass
class Rated:
    """One item with its human annotations, in the order of the item's annotators."""

    item: AnnotationItem
    humans: list[Annotation]


def join(items: list[AnnotationItem], annotations: list[Annotation]) -> list[Rated]:
    """Every item with its annotations; an item without all its annotators' labels is an error."""
    by_item: dict[str, dict[str, Annotation]] = defaultdict(dict)
    for annotation in annotations:
        by_item[annotation.item_id][annotation.annotator] = annotation
    known = {item.item_id for item in items}
    stray = sorted(set(by_item) - known)
    if stray:
        raise InputError(f"annotation of unknown item {stray[0]} ({len(stray)} in all)")
    rated = []
    for item in sorted(items, key=lambda i: i.item_id):
        labels = by_item.get(item.item_id, {})
        missing = [a for a in item.annotators if a not in labels]
        if missing:
            raise InputError(f"item {item.item_id} has no label from {', '.join(missing)}")
        rated.append(Rated(item, [labels[a] for a in item.annotators]))
    return rated


def llm_human_pairs(rated: list[Rated]) -> tuple[list[str], list[str]]:
    """(judge labels, human labels): one pair per annotation."""
    pairs = [(r.item.judge_label, h.relevant) for r in rated for h in r.humans]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def inter_pairs(rated: list[Rated]) -> tuple[list[str], list[str]]:
    """(first annotator's labels, second annotator's labels) of the doubly annotated items."""
    pairs = [(r.humans[0].relevant, r.humans[1].relevant) for r in rated if len(r.humans) > 1]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def percent(first: list[str], second: list[str]) -> float | None:
    """Percentage of equal labels (None without pairs)."""
    if not first:
        return None
    return 100.0 * float(np.mean(np.array(first) == np.array(second)))


def confusion(first: list[str], second: list[str]) -> list[list[int]]:
    """The 2x2 confusion matrix, rows the first rater, columns the second (yes, no)."""
    from sklearn.metrics import confusion_matrix

    if not first:
        return [[0, 0], [0, 0]]
    return confusion_matrix(first, second, labels=LABELS).tolist()


def alpha(rated: list[Rated], annotators: list[str], with_judge: bool) -> float | None:
    """Krippendorff's alpha (nominal) over the items, people as coders (and the judge)."""
    import krippendorff

    coders = [*annotators, JUDGE] if with_judge else list(annotators)
    row = {name: i for i, name in enumerate(coders)}
    data = np.full((len(coders), len(rated)), np.nan)
    for column, r in enumerate(rated):
        for human in r.humans:
            data[row[human.annotator], column] = LABELS.index(human.relevant)
        if with_judge:
            data[row[JUDGE], column] = LABELS.index(r.item.judge_label)
    if (np.sum(~np.isnan(data), axis=0) > 1).sum() == 0:
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            value = krippendorff.alpha(
                reliability_data=data, value_domain=[0, 1], level_of_measurement="nominal"
            )
        except (ValueError, ZeroDivisionError):
            return None
    return None if np.isnan(value) else float(value)


Statistic = Callable[[list[Rated]], "float | None"]


def pair_block(
    rated: list[Rated],
    pairs: Callable[[list[Rated]], tuple[list[str], list[str]]],
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Pairs, percent agreement and kappa with CIs, and the confusion matrix of one group."""
    first, second = pairs(rated)
    stats = bootstrap(
        rated,
        {"agreement": lambda r: percent(*pairs(r)), "kappa": lambda r: kappa(*pairs(r))},
        resamples,
        seed,
    )
    return {
        "pairs": len(first),
        **stats,
        "confusion": {"labels": LABELS, "matrix": confusion(first, second)},
    }


def _group(rated: list[Rated], resamples: int, seed: int) -> dict[str, Any]:
    return {
        "items": len(rated),
        "llm_human": pair_block(rated, llm_human_pairs, resamples, seed),
        "inter_annotator": pair_block(rated, inter_pairs, resamples, seed),
    }


def disagreements(rated: list[Rated]) -> list[dict[str, Any]]:
    """Every item where a person differs from the judge or from the other person, with text."""
    out = []
    for r in rated:
        kinds = []
        if any(h.relevant != r.item.judge_label for h in r.humans):
            kinds.append("llm_human")
        if len({h.relevant for h in r.humans}) > 1:
            kinds.append("inter_annotator")
        if not kinds:
            continue
        item = r.item
        out.append(
            {
                "item_id": item.item_id,
                "kinds": kinds,
                "question_id": item.question_id,
                "question": item.question,
                "answer": item.answer,
                "stage": item.stage,
                "final_label": item.final_label,
                "evidence": item.evidence,
                "doc_id": item.doc_id,
                "unit_id": item.unit_id,
                "judge_label": item.judge_label,
                "humans": [
                    {
                        "annotator": h.annotator,
                        "relevant": h.relevant,
                        "problematic": h.problematic,
                        "comment": h.comment,
                    }
                    for h in r.humans
                ],
                "text": item.text,
            }
        )
    return out


def compute_agreement(
    items: list[AnnotationItem],
    annotations: list[Annotation],
    annotators: list[str],
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Every statistic of the report (see the module docstring for the definitions)."""
    rated = join(items, annotations)
    overall = _group(rated, resamples, seed)
    alphas = bootstrap(
        rated,
        {
            "humans": lambda r: alpha(r, annotators, with_judge=False),
            "humans_and_judge": lambda r: alpha(r, annotators, with_judge=True),
        },
        resamples,
        seed,
    )
    flagged = {h.item_id for r in rated for h in r.humans if h.problematic}
    unflagged = [r for r in rated if r.item.item_id not in flagged]
    return {
        "items": len(rated),
        "annotations": sum(len(r.humans) for r in rated),
        "double_items": sum(len(r.humans) > 1 for r in rated),
        "annotators": list(annotators),
        "bootstrap": {"resamples": resamples, "seed": seed, "confidence": 0.95},
        "llm_human": overall["llm_human"],
        "inter_annotator": overall["inter_annotator"],
        "krippendorff_alpha": alphas,
        "by_stage": {
            stage: _group([r for r in rated if r.item.stage == stage], resamples, seed)
            for stage in ("token", "vector")
        },
        "by_label": {
            label: _group([r for r in rated if r.item.final_label == label], resamples, seed)
            for label in ("answerable", "unanswerable")
        },
        "by_annotator": {
            person: {
                "annotations": len(pairs[0]),
                "agreement": percent(*pairs),
                "kappa": kappa(*pairs),
            }
            for person in annotators
            for pairs in [_pairs_of(rated, person)]
        },
        "problematic": {
            "annotations_flagged": sum(h.problematic for r in rated for h in r.humans),
            "items_flagged": len(flagged),
            "llm_human_without_flagged_items": pair_block(
                unflagged, llm_human_pairs, resamples, seed
            ),
        },
        "disagreements": disagreements(rated),
    }


def _pairs_of(rated: list[Rated], person: str) -> tuple[list[str], list[str]]:
    """(judge labels, this person's labels) over the person's annotations."""
    pairs = [
        (r.item.judge_label, h.relevant) for r in rated for h in r.humans if h.annotator == person
    ]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def second_judge_block(
    rated: list[Rated], labels: dict[str, str | None], resamples: int, seed: int
) -> dict[str, Any]:
    """A second judge's agreement with people (`[audit.judge]`): one pair per annotation
    (second judge, person) over the items it judged, as `llm_human` is for the build's judge;
    an item whose judgment failed is left out and counted (`failed`)."""
    judged = [r for r in rated if labels.get(r.item.item_id) is not None]

    def pairs(sample: list[Rated]) -> tuple[list[str], list[str]]:
        first = [str(labels[r.item.item_id]) for r in sample for _ in r.humans]
        second = [str(human.relevant) for r in sample for human in r.humans]
        return first, second

    return {**pair_block(judged, pairs, resamples, seed), "failed": len(rated) - len(judged)}
