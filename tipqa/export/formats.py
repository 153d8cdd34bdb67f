"""One labelled question as a record of SelfAware, KUQ, UA-Bench or AbstentionBench.

Each format's gold says "answer" or "abstain" in its own fields; a TIP unanswerable question
is a well-defined question whose knowledge is missing from the pretraining corpus, so where a
format names why a question is unanswerable it is the model's uncertainty (UA-Bench's
`MODEL_UNCERTAIN`: the question is well defined, the answer is beyond what the model learned),
never data uncertainty (an ambiguous or underspecified question).

Where the formats left a choice, these are the ones made:

- SelfAware: one JSON list per split; `question_id` keeps the split's string id (SelfAware's
  are integers); `answer` is the gold answer and its aliases, null when unanswerable (a TIP
  unanswerable question has a gold answer, but the format's unanswerable ones have none);
  `source` is one name for the whole benchmark (SelfAware names the origin dataset).
- KUQ: JSON lines; `answer` is the gold answer string of a known question, null for an
  unknown one; `category` is "knowledge absent from pretraining data" for an unknown question
  (none of KUQ's own categories, which describe the question, says that) and null for a known
  one. KUQ has no id field.
- UA-Bench: JSON lines with `id` (the id its predictions file gives back), `answers`, `label`
  (ANSWERABLE or ABSTAIN) and `uncertainty` (MODEL_UNCERTAIN for ABSTAIN, else null);
  `python -m tipqa.evaluate uabench` reads these records back as gold.
- AbstentionBench: JSON lines; `reference_answers` null when it should abstain; `metadata`
  holds the id, split, source, deciding stage and the abstention reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tipqa.core.errors import InputError
from tipqa.core.records import LabeledQuestion

MODEL_UNCERTAINTY = "MODEL_UNCERTAIN"
KUQ_ABSENT_CATEGORY = "knowledge absent from pretraining data"


def answers(question: LabeledQuestion) -> list[str]:
    """The gold answer, then its other aliases, without repeats."""
    return list(dict.fromkeys([question.answer, *question.aliases]))


def _answerable(question: LabeledQuestion) -> bool:
    """True for an answerable question, False for an unanswerable one; else an InputError."""
    if question.label not in ("answerable", "unanswerable"):
        raise InputError(
            f"question {question.id!r} is {question.label!r}: only answerable and unanswerable "
            "questions are in the splits",
            field="label",
        )
    return question.label == "answerable"


def selfaware(question: LabeledQuestion, split: str, source: str) -> dict[str, Any]:
    """A SelfAware record: `answer` is the list of aliases, null when unanswerable."""
    answerable = _answerable(question)
    return {
        "question_id": question.id,
        "question": question.question,
        "answer": answers(question) if answerable else None,
        "answerable": answerable,
        "source": source,
    }


def kuq(question: LabeledQuestion, split: str, source: str) -> dict[str, Any]:
    """A KUQ record: unknown questions get the category of absent knowledge, known none."""
    answerable = _answerable(question)
    return {
        "question": question.question,
        "answer": question.answer if answerable else None,
        "unknown": not answerable,
        "category": None if answerable else KUQ_ABSENT_CATEGORY,
        "source": source,
    }


def ua_bench(question: LabeledQuestion, split: str, source: str) -> dict[str, Any]:
    """A UA-Bench record: gold ANSWERABLE or ABSTAIN, and why it abstains (model uncertainty)."""
    answerable = _answerable(question)
    return {
        "id": question.id,
        "question": question.question,
        "answers": answers(question),
        "label": "ANSWERABLE" if answerable else "ABSTAIN",
        "uncertainty": None if answerable else MODEL_UNCERTAINTY,
        "source": source,
    }


def abstentionbench(question: LabeledQuestion, split: str, source: str) -> dict[str, Any]:
    """An AbstentionBench record: `should_abstain`, reference answers none when it should."""
    answerable = _answerable(question)
    return {
        "question": question.question,
        "reference_answers": answers(question) if answerable else None,
        "should_abstain": not answerable,
        "metadata": {
            "id": question.id,
            "split": split,
            "source": source,
            "stage": question.stage,
            "abstention_reason": None if answerable else MODEL_UNCERTAINTY,
        },
    }


Convert = Callable[[LabeledQuestion, str, str], dict[str, Any]]


@dataclass(frozen=True)
class ExportFormat:
    """A benchmark's record format: how a question becomes a record, and the file kind."""

    name: str
    convert: Convert
    json_list: bool

    def file_name(self, split: str) -> str:
        """The file of `split` in this format (`test.json` or `test.jsonl`)."""
        return f"{split}.json" if self.json_list else f"{split}.jsonl"


FORMATS: dict[str, ExportFormat] = {
    "selfaware": ExportFormat("selfaware", selfaware, json_list=True),
    "kuq": ExportFormat("kuq", kuq, json_list=False),
    "ua-bench": ExportFormat("ua-bench", ua_bench, json_list=False),
    "abstentionbench": ExportFormat("abstentionbench", abstentionbench, json_list=False),
}
