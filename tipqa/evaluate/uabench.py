"""UA-Bench's uncertainty attribution, with the gold attribution a TIP label gives.

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

Metrics. ACC: correct answers over answerable questions. DU-F1 and MU-F1: the F1 of predicting
that label against its target sets, over the failure sets (`knowledge_absent`,
`answerable_error`, `data_uncertain`), with normalized counts: every count is divided by the
size of the set it comes from, so each non-empty set weighs one however many questions it has
(UA-Bench names normalized counts as its answer to the size imbalance of its two sets without
spelling them out; this is that reading). So MU-F1 has TP = sum over MU target sets of the share
predicted MU, FN = the share not predicted MU, FP = the share of `data_uncertain` predicted MU
(0 without that set, where MU precision is 1 whenever any MU is predicted); DU-F1 the same with
the roles swapped, None without a `data_uncertain` set. Misattribution rate: DATA_UNCERTAIN
predictions over the well-defined questions (every question outside `data_uncertain`). TIP's own
figures: MU recall on `knowledge_absent` beside MU recall on `answerable_error`.

Predictions come as the model's raw `response` (read by the protocol: the last balanced
`\\boxed{}`, labelled by `box_label`), or as a `prediction` label with the `answer` (judged) or
`correct`. A response without a box is an answer (its last line), counted as `unboxed`; one with
several boxes is read by the last, counted as `multiple_boxes`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.jsonl import iter_json_lines
from tipqa.evaluate.gold import GoldSet
from tipqa.evaluate.metrics import Scored
from tipqa.evaluate.refusal import BOX, box_label, last_boxed
from tipqa.evaluate.uabench_judge import AliasJudge, AnswerJudge, AnswerToJudge

ANSWERABLE, DATA_UNCERTAIN, MODEL_UNCERTAIN = "ANSWERABLE", "DATA_UNCERTAIN", "MODEL_UNCERTAIN"
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


def read_response(text: str, counts: Counter[str]) -> tuple[str, str]:
    """(label, answer) of a raw response by the protocol; counts `unboxed`, `multiple_boxes`."""
    content = last_boxed(text)
    if content is None:
        counts["unboxed"] += 1
        lines = text.strip().splitlines()
        return ANSWERABLE, lines[-1].strip() if lines else ""
    if text.count(BOX) > 1:
        counts["multiple_boxes"] += 1
    label = box_label(content)
    return (label, "") if label else (ANSWERABLE, content.strip())


def read_attributions(path: Path, counts: Counter[str]) -> dict[str, tuple[str, str, bool | None]]:
    """Each id's (label, answer, correct or None when the answer is to be judged)."""
    if not Path(path).is_file():
        raise InputError("no predictions file here", path=str(path))
    found: dict[str, tuple[str, str, bool | None]] = {}
    for number, row in iter_json_lines(Path(path)):
        where: dict[str, Any] = {"path": str(path), "line": number}
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise InputError("expected an object with a string id", **where)
        if row["id"] in found:
            raise InputError(f"question {row['id']!r} predicted twice", **where)
        if isinstance(row.get("response"), str):
            label, answer = read_response(row["response"], counts)
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
    positive: Sequence[str],
    negative: Sequence[str],
    counts: dict[str, dict[str, int]],
) -> dict[str, float] | None:
    """Precision, recall and F1 of predicting `label`, each set's counts over its size."""
    sizes = {name: sum(row.values()) for name, row in counts.items()}
    targets = [s for s in positive if sizes[s]]
    if not targets:
        return None
    tp = sum(counts[s][label] / sizes[s] for s in targets)
    fn = len(targets) - tp
    fp = sum(counts[s][label] / sizes[s] for s in negative if sizes[s])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


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
    mu = normalized_f1(MODEL_UNCERTAIN, MU_TARGET_SETS, DU_TARGET_SETS, counts)
    du = normalized_f1(DATA_UNCERTAIN, DU_TARGET_SETS, MU_TARGET_SETS, counts)
    return {
        "questions": sum(sizes.values()),
        "sets": sizes,
        "counts": counts,
        "acc": _share(sizes["answerable_correct"], answerable),
        "mu_f1": None if mu is None else mu["f1"],
        "du_f1": None if du is None else du["f1"],
        "mu": mu,
        "du": du,
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


def from_scored(scored: Sequence[Scored]) -> dict[str, Any]:
    """UA-Bench's metrics of the main scorer's outcomes (a question without a prediction left out).

    A refusal is MODEL_UNCERTAIN unless its box said `<DATA_UNCERTAIN>`; an answer is correct
    by tipqa's alias match.
    """
    pairs = []
    for item in scored:
        if item.refusal_kind == "missing":
            continue
        target = "ANSWER" if item.label == "answerable" else MODEL_UNCERTAIN
        if not item.refused:
            predicted = ANSWERABLE
        elif item.refusal_kind == "boxed_data_uncertain":
            predicted = DATA_UNCERTAIN
        else:
            predicted = MODEL_UNCERTAIN
        pairs.append((target, Attributed(item.id, predicted, item.answer, item.correct)))
    return attribution_scores(pairs)


def score_uabench(
    targets: Sequence[Target],
    path: Path,
    *,
    judge: AnswerJudge | None = None,
    allow_missing: bool = False,
    split: str = "",
) -> dict[str, Any]:
    """UA-Bench's metrics of the predictions in `path` on `targets`.

    Every target needs a prediction (with `allow_missing`, those without one are left out and
    counted); a prediction for a question not among the targets is an InputError. Answers
    without a given `correct` are judged by `judge` (tipqa's alias match by default); a judge's
    unparsable reply is counted in `judge_parse_errors` and scored as not correct.
    """
    judge = judge or AliasJudge()
    notes: Counter[str] = Counter()
    predicted = read_attributions(path, notes)
    by_id = {t.id: t for t in targets}
    stray = sorted(set(predicted) - set(by_id))
    if stray:
        raise InputError(
            f"{len(stray)} prediction(s) for questions not in split {split!r}, e.g. {stray[0]!r}",
            path=str(path),
        )
    missing = [t.id for t in targets if t.id not in predicted]
    if missing and not allow_missing:
        raise InputError(
            f"{len(missing)} question(s) of split {split!r} have no prediction, e.g. "
            f"{missing[0]!r} (--allow-missing leaves them out)",
            path=str(path),
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
    notes["judge_parse_errors"] = sum(1 for d in decisions if d is None)
    pairs = []
    for t in present:
        label, answer, correct = predicted[t.id]
        decided = judged.get(t.id, correct) if correct is None else correct
        pairs.append((t.target, Attributed(t.id, label, answer, bool(decided))))
    result = attribution_scores(pairs)
    result.update(
        split=split,
        judge=judge.name,
        judged=len(to_judge),
        missing_left_out=len(missing),
        parse={key: notes[key] for key in ("unboxed", "multiple_boxes", "judge_parse_errors")},
    )
    return result
