"""UA-Bench's uncertainty attribution, with the gold attribution a TIP label gives: one scorer.

Both `python -m tipqa.evaluate uabench` (`score_uabench`) and the main scorer's `uabench` block
(`score_responses`) go through `score_attributions`, so they agree on the same responses.

UA-Bench's model outputs an answer, DATA_UNCERTAIN (the question is ambiguous, underspecified
or lacks information) or MODEL_UNCERTAIN (the question is well defined but beyond the model).
A TriviaQA question is well defined, so the gold attribution of a TIP split is:

- an unanswerable question (its knowledge is absent from the pretraining corpus) is a
  MODEL_UNCERTAIN target: the set `knowledge_absent`;
- an answerable question expects an answer; one the model does not answer correctly (a wrong
  answer or an abstention) joins UA-Bench's answerable-error set, `answerable_error`, whose
  target is MODEL_UNCERTAIN too; the rest is `answerable_correct`;
- a data-uncertain question (only in pools that hold some, e.g. an imported UA-Bench set read
  from its records) is a DATA_UNCERTAIN target: the set `data_uncertain`.

Reading a raw response, as UA-Bench's protocol says (its Appendix B): the content of the last
`\\boxed{` occurrence, its braces matched from that box's opening brace
(`tipqa.evaluate.refusal.last_boxed`); a response without a box, or whose last box never closes
(a truncated output), has no valid box and keeps a short suffix instead, its last line (at most
`SUFFIX_CHARS` characters), counted in `unboxed` or `truncated_box`; several boxes are counted in
`multiple_boxes` (the last is read). The content, or the suffix, is labelled by case-insensitive
containment of the protocol's tokens: "I don't know" or `<MODEL_UNCERTAIN>` is MODEL_UNCERTAIN,
`<DATA_UNCERTAIN>` DATA_UNCERTAIN, anything else is an answer, passed to the answer judge as it
stands (`tipqa.evaluate.uabench_judge`). A prediction may also come as a `prediction` label with
the `answer` (judged) or `correct`.

Metrics. ACC: correct answers over answerable questions. DU-F1 and MU-F1, as UA-Bench's text
names them: F1 with normalized counts over its two sets, the data-uncertain targets (its
Unanswerable Set) and the model-uncertain targets (its Answerable-Error Set, which a TIP split's
knowledge-absent questions join): every count is divided by the size of the set it comes from,
so both sets weigh one however many questions each has. MU-F1: TP = the share of model-uncertain
targets said MODEL_UNCERTAIN, FN = 1 - TP, FP = the share of data-uncertain targets said
MODEL_UNCERTAIN (0 without that set); F1 = 2TP / (2TP + FP + FN), precision TP / (TP + FP),
recall TP. DU-F1 the same with the roles swapped. `per_set_normalization` keeps tipqa's earlier
reading, where knowledge-absent and answerable-error questions are normalized apart, so each of
the three sets weighs one. Misattribution rate: DATA_UNCERTAIN predictions over the well-defined
questions (every question outside `data_uncertain`). TIP's own figures: MU recall on
`knowledge_absent` beside MU recall on `answerable_error`. A ratio without a denominator (ACC
without answerable questions, an F1 without its target set, a precision with nothing predicted)
is None (`null`): undefined, not 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_json_lines
from tipqa.evaluate.gold import GoldSet
from tipqa.evaluate.refusal import BOX, DATA_UNCERTAIN, MODEL_UNCERTAIN, box_label, last_boxed
from tipqa.evaluate.uabench_judge import AliasJudge, AnswerJudge, AnswerToJudge

ANSWERABLE = "ANSWERABLE"
PREDICTED_LABELS: tuple[str, ...] = (ANSWERABLE, DATA_UNCERTAIN, MODEL_UNCERTAIN)
TARGETS: tuple[str, ...] = ("ANSWER", MODEL_UNCERTAIN, DATA_UNCERTAIN)
SETS: tuple[str, ...] = (
    "answerable_correct",
    "answerable_error",
    "knowledge_absent",
    "data_uncertain",
)
MU_TARGET_SETS = ("knowledge_absent", "answerable_error")
DU_TARGET_SETS = ("data_uncertain",)
SUFFIX_CHARS = 200
Predicted = dict[str, tuple[str, str, bool | None]]
"""Each id's (label, answer, correct or None when the answer is to be judged)."""


@dataclass(frozen=True)
class Target:
    """One question's gold attribution: ANSWER, MODEL_UNCERTAIN or DATA_UNCERTAIN."""

    id: str
    question: str
    references: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class Attributed:
    """One question's three-way prediction, its answer, and whether that answer is correct."""

    id: str
    predicted: str
    answer: str = ""
    correct: bool = False


def targets_of(gold: GoldSet) -> list[Target]:
    """The gold attribution of a TIP split (answerable: ANSWER, unanswerable: MODEL_UNCERTAIN)."""
    out = []
    for q in gold.questions:
        if q.label not in ("answerable", "unanswerable"):
            raise InputError(f"label {q.label!r} has no UA-Bench target", field="label")
        target = "ANSWER" if q.label == "answerable" else MODEL_UNCERTAIN
        out.append(Target(q.id, q.question, (q.answer, *q.aliases), target))
    return out


def read_targets(path: Path) -> list[Target]:
    """UA-Bench records (`id`, `question`, `answers`, `label`, `uncertainty`) as targets.

    `label` ANSWERABLE is an ANSWER target; ABSTAIN takes its `uncertainty` (DATA_UNCERTAIN or
    MODEL_UNCERTAIN). `python -m tipqa.export --format ua-bench` writes such records.
    """
    if not Path(path).is_file():
        raise InputError("no UA-Bench records here", path=str(path))
    out = []
    for number, row in iter_json_lines(Path(path)):
        where: dict[str, Any] = {"path": str(path), "line": number}
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise InputError("expected an object with a string id", **where)
        label, why = row.get("label"), row.get("uncertainty")
        if label == "ANSWERABLE":
            target = "ANSWER"
        elif label == "ABSTAIN" and why in (DATA_UNCERTAIN, MODEL_UNCERTAIN):
            target = str(why)
        else:
            raise InputError(
                f"label {label!r} with uncertainty {why!r}: expected ANSWERABLE, or ABSTAIN "
                "with DATA_UNCERTAIN or MODEL_UNCERTAIN",
                field="label",
                **where,
            )
        answers = row.get("answers") or []
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise InputError("answers must be a list of strings", field="answers", **where)
        out.append(Target(row["id"], str(row.get("question", "")), tuple(answers), target))
    return out


def read_response(text: str, notes: Counter[str]) -> tuple[str, str]:
    """(label, answer) of a raw response by the protocol (see the module docstring).

    Counts `unboxed`, `truncated_box` and `multiple_boxes` in `notes`.
    """
    content = last_boxed(text)
    boxes = text.count(BOX)
    if content is None:
        notes["truncated_box" if boxes else "unboxed"] += 1
        lines = text.strip().splitlines()
        content = lines[-1].strip()[-SUFFIX_CHARS:] if lines else ""
    elif boxes > 1:
        notes["multiple_boxes"] += 1
    label = box_label(content)
    return (label, "") if label else (ANSWERABLE, content.strip())


def read_attributions(path: Path, notes: Counter[str]) -> Predicted:
    """Each id's (label, answer, correct or None when the answer is to be judged)."""
    if not Path(path).is_file():
        raise InputError("no predictions file here", path=str(path))
    found: Predicted = {}
    for number, row in iter_json_lines(Path(path)):
        where: dict[str, Any] = {"path": str(path), "line": number}
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise InputError("expected an object with a string id", **where)
        if row["id"] in found:
            raise InputError(f"question {row['id']!r} predicted twice", **where)
        if isinstance(row.get("response"), str):
            label, answer = read_response(row["response"], notes)
            found[row["id"]] = (label, answer, None)
            continue
        given = row.get("prediction")
        if given not in PREDICTED_LABELS:
            raise InputError(
                f"prediction {given!r} is not one of {', '.join(PREDICTED_LABELS)} "
                "(or give the raw `response`)",
                field="prediction",
                **where,
            )
        correct = row.get("correct")
        answer = row.get("answer", "")
        if correct is not None and not isinstance(correct, bool):
            raise InputError("correct must be true or false", field="correct", **where)
        if not isinstance(answer, str):
            raise InputError("answer must be a string", field="answer", **where)
        label = str(given)
        if label == ANSWERABLE and correct is None and "answer" not in row:
            raise InputError("an ANSWERABLE prediction needs its `answer` (or `correct`)", **where)
        found[row["id"]] = (label, answer, correct if label == ANSWERABLE else False)
    return found


def set_of(target: str, item: Attributed) -> str:
    """The UA-Bench set a question falls in (see the module docstring)."""
    if target == DATA_UNCERTAIN:
        return "data_uncertain"
    if target == MODEL_UNCERTAIN:
        return "knowledge_absent"
    correct = item.predicted == ANSWERABLE and item.correct
    return "answerable_correct" if correct else "answerable_error"


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def normalized_f1(
    label: str,
    positive: Sequence[Sequence[str]],
    negative: Sequence[Sequence[str]],
    counts: dict[str, dict[str, int]],
) -> dict[str, float | None] | None:
    """Precision, recall and F1 of predicting `label`, with normalized counts; None without
    targets.

    `positive` and `negative` are groups of sets; a group is one set of the F1, its counts
    divided by its size, so that every non-empty group weighs one.
    """

    def said(group: Sequence[str]) -> float | None:
        size = sum(sum(counts[name].values()) for name in group)
        return _share(sum(counts[name][label] for name in group), size)

    targets = [share for share in map(said, positive) if share is not None]
    if not targets:
        return None
    tp = sum(targets)
    fn = len(targets) - tp
    fp = sum(share for share in map(said, negative) if share is not None)
    return {
        "precision": _share(tp, tp + fp),
        "recall": tp / len(targets),
        "f1": 2 * tp / (2 * tp + fp + fn),
    }


def attribution_scores(pairs: Iterable[tuple[str, Attributed]]) -> dict[str, Any]:
    """UA-Bench's ACC, MU-F1, DU-F1, the misattribution rate and MU recall by set."""
    counts = {name: dict.fromkeys(PREDICTED_LABELS, 0) for name in SETS}
    for target, item in pairs:
        counts[set_of(target, item)][item.predicted] += 1
    sizes = {name: sum(row.values()) for name, row in counts.items()}
    answerable = sizes["answerable_correct"] + sizes["answerable_error"]
    defined = [s for s in SETS if s != "data_uncertain"]
    defined_total = sum(sizes[s] for s in defined)
    du_defined = sum(counts[s][DATA_UNCERTAIN] for s in defined)
    abstained_defined = du_defined + sum(counts[s][MODEL_UNCERTAIN] for s in defined)
    mu = normalized_f1(MODEL_UNCERTAIN, [MU_TARGET_SETS], [DU_TARGET_SETS], counts)
    du = normalized_f1(DATA_UNCERTAIN, [DU_TARGET_SETS], [MU_TARGET_SETS], counts)
    apart = [[name] for name in MU_TARGET_SETS]
    mu_apart = normalized_f1(MODEL_UNCERTAIN, apart, [DU_TARGET_SETS], counts)
    du_apart = normalized_f1(DATA_UNCERTAIN, [DU_TARGET_SETS], apart, counts)
    return {
        "questions": sum(sizes.values()),
        "sets": sizes,
        "counts": counts,
        "acc": _share(sizes["answerable_correct"], answerable),
        "mu_f1": None if mu is None else mu["f1"],
        "du_f1": None if du is None else du["f1"],
        "mu": mu,
        "du": du,
        "per_set_normalization": {
            "mu_f1": None if mu_apart is None else mu_apart["f1"],
            "du_f1": None if du_apart is None else du_apart["f1"],
            "mu": mu_apart,
            "du": du_apart,
        },
        "misattribution_rate": _share(du_defined, defined_total),
        "misattribution_of_abstentions": _share(du_defined, abstained_defined),
        "mu_recall_knowledge_absent": _share(
            counts["knowledge_absent"][MODEL_UNCERTAIN], sizes["knowledge_absent"]
        ),
        "mu_recall_answerable_error": _share(
            counts["answerable_error"][MODEL_UNCERTAIN], sizes["answerable_error"]
        ),
        "answered_knowledge_absent": _share(
            counts["knowledge_absent"][ANSWERABLE], sizes["knowledge_absent"]
        ),
    }


def score_attributions(
    targets: Sequence[Target],
    predicted: Predicted,
    notes: Counter[str],
    *,
    source: str,
    judge: AnswerJudge | None = None,
    allow_missing: bool = False,
    split: str = "",
) -> dict[str, Any]:
    """UA-Bench's metrics of `predicted` on `targets`: the one scorer of both entry points.

    Every target needs a prediction (with `allow_missing`, those without one are left out and
    counted); a prediction for a question not among the targets is an InputError naming
    `source`. Answers without a given `correct` are judged by `judge` (tipqa's alias match by
    default); a judge's unparsable reply is counted in `judge_parse_errors` and scored as not
    correct. `notes` holds the reading's counts (`read_response`).
    """
    judge = judge or AliasJudge()
    by_id = {t.id: t for t in targets}
    stray = sorted(set(predicted) - set(by_id))
    if stray:
        raise InputError(
            f"{len(stray)} prediction(s) for questions not in split {split!r}, e.g. {stray[0]!r}",
            path=source,
        )
    missing = [t.id for t in targets if t.id not in predicted]
    if missing and not allow_missing:
        raise InputError(
            f"{len(missing)} question(s) of split {split!r} have no prediction, e.g. "
            f"{missing[0]!r} (--allow-missing leaves them out)",
            path=source,
        )
    present = [t for t in targets if t.id in predicted]
    to_judge = [
        t
        for t in present
        if predicted[t.id][0] == ANSWERABLE and predicted[t.id][2] is None and t.target == "ANSWER"
    ]
    decisions = judge.judge(
        [AnswerToJudge(t.question, predicted[t.id][1], t.references) for t in to_judge]
    )
    judged = dict(zip((t.id for t in to_judge), decisions, strict=True))
    pairs = []
    for t in present:
        label, answer, correct = predicted[t.id]
        decided = judged.get(t.id) if correct is None else correct
        pairs.append((t.target, Attributed(t.id, label, answer, bool(decided))))
    result = attribution_scores(pairs)
    parse = {key: notes[key] for key in ("unboxed", "truncated_box", "multiple_boxes")}
    result.update(
        split=split,
        judge=judge.name,
        judged=len(to_judge),
        missing_left_out=len(missing),
        parse={**parse, "judge_parse_errors": sum(d is None for d in decisions)},
    )
    return result


def score_uabench(
    targets: Sequence[Target],
    path: Path,
    *,
    judge: AnswerJudge | None = None,
    allow_missing: bool = False,
    split: str = "",
) -> dict[str, Any]:
    """UA-Bench's metrics of the predictions file `path` on `targets` (`score_attributions`)."""
    notes: Counter[str] = Counter()
    predicted = read_attributions(path, notes)
    return score_attributions(
        targets,
        predicted,
        notes,
        source=str(path),
        judge=judge,
        allow_missing=allow_missing,
        split=split,
    )


def score_responses(gold: GoldSet, responses: Mapping[str, str], source: str) -> dict[str, Any]:
    """The main scorer's `uabench` block: each raw response read by the protocol, answers
    judged by alias match, questions without a response left out (and counted)."""
    notes: Counter[str] = Counter()
    predicted: Predicted = {
        qid: (*read_response(text, notes), None) for qid, text in responses.items()
    }
    return score_attributions(
        targets_of(gold), predicted, notes, source=source, allow_missing=True, split=gold.split
    )
