"""Tests of alias building, question validation and the duplicate policies."""

from __future__ import annotations

import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.records import Question
from tipqa.core.stats import StepStats
from tipqa.sources.questions import QUESTION_SOURCES, build_aliases, load_questions
from tipqa.sources.questions.base import QuestionCollector, make_question

FIELDS = ("QuestionId", "Question", "Answer.Value", "Answer.Aliases")


def test_aliases_dedup_by_tokens_keep_first_spelling_and_drop_empty() -> None:
    aliases = build_aliases(
        [
            "Sunset Blvd.",
            "sunset  blvd",
            "Sunset Boulevard",
            "???",
            "",
            None,
            7,
            "SUNSET BOULEVARD",
            " Ørsted ",
        ]
    )
    assert aliases == ["Sunset Blvd.", "Sunset Boulevard", "Ørsted"]


def question(**changes: object) -> Question:
    """make_question with valid defaults and `changes`."""
    options: dict[str, object] = {
        "qid": "q1",
        "text": " Who? ",
        "answer": "Marigold Perrault",
        "alias_lists": [["M. Perrault"], ["marigold perrault"]],
        "source": "f.json:0",
        "path": "f.json",
        "line": None,
        "place": "Data[0]",
        "fields": FIELDS,
    }
    options.update(changes)
    return make_question(**options)  # type: ignore[arg-type]


def test_make_question_puts_the_answer_first() -> None:
    q = question()
    assert q == Question(
        "q1", "Who?", "Marigold Perrault", ["Marigold Perrault", "M. Perrault"], "f.json:0"
    )


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"qid": None}, "QuestionId", "missing or empty question id"),
        ({"text": "  "}, "Question", "missing or empty question"),
        ({"answer": None}, "Answer.Value", "missing or empty answer"),
        ({"answer": "?", "alias_lists": [["!"], []]}, "Answer.Aliases", "no alias with a word"),
        ({"alias_lists": ["not a list"]}, "Answer.Aliases", "aliases must be a list"),
    ],
)
def test_make_question_errors_name_file_record_and_field(
    changes: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(InputError, match=message) as info:
        question(**changes)
    assert info.value.field == field
    assert info.value.path == "f.json"
    assert "Data[0]" in str(info.value)


def test_collector_policies() -> None:
    stats = StepStats("questions")
    merge = QuestionCollector(stats, duplicates="merge")
    merge.add(question(), path="a")
    merge.add(
        question(source="g.json:3", alias_lists=[["marigold perrault", "M. Perrault"]]), path="b"
    )
    assert [q.source for q in merge.questions()] == ["f.json:0"]
    assert stats.counts["merged_duplicates"] == 1
    with pytest.raises(InputError, match=r"appears at f\.json:0 and g\.json:4 with a different"):
        merge.add(question(source="g.json:4", answer="Someone Else"), path="b")
    strict = QuestionCollector(StepStats("questions"))
    strict.add(question(), path="a")
    with pytest.raises(InputError, match=r"duplicate question id 'q1' at f\.json:1"):
        strict.add(question(source="f.json:1"), path="a")


def test_unknown_source_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"hf-rows.*triviaqa-json"):
        load_questions("csv", paths="x.csv")
    assert set(QUESTION_SOURCES.names) == {
        "fields",
        "nq-open",
        "popqa",
        "hf-rows",
        "hub",
        "llm-foundry-jsonl",
        "tipqa-jsonl",
        "triviaqa-json",
    }
