"""The generic question source: configurable fields, and the PopQA and NQ-open presets."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tipqa.config import read_config
from tipqa.core.errors import ConfigError, InputError
from tipqa.sources.questions import QUESTION_SOURCES
from tipqa.sources.questions.base import FromFiles
from tipqa.sources.questions.fields import (
    FieldQuestions,
    FieldQuestionsSettings,
    NQOpenQuestions,
    NQOpenSettings,
    PopQAQuestions,
    PopQASettings,
)

DATA = Path(__file__).parents[3] / "data" / "questions"


def write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_popqa_preset_reads_the_json_list_of_possible_answers() -> None:
    source = PopQAQuestions(PopQASettings(paths=(str(DATA / "popqa-like.jsonl"),)))
    questions = source.load()
    assert [q.id for q in questions] == ["4101", "4102", "4103", "4104"]
    first = questions[0]
    assert (first.text, first.answer) == ("What is Orrin Vale's occupation?", "cartographer")
    assert first.aliases == ["cartographer", "map maker", "mapmaker"]
    assert first.source == "popqa-like.jsonl:1"
    assert questions[3].aliases == ["Kestrel Bay"]  # "Kestrel-Bay" has the same tokens
    assert source.stats.counts["questions"] == 4


def test_popqa_tsv_release_layout_gives_the_same_questions() -> None:
    tsv = PopQAQuestions(PopQASettings(paths=(str(DATA / "popqa-like.tsv"),))).load()
    jsonl = PopQAQuestions(PopQASettings(paths=(str(DATA / "popqa-like.jsonl"),))).load()
    assert [(q.id, q.text, q.answer, q.aliases) for q in tsv] == [
        (q.id, q.text, q.answer, q.aliases) for q in jsonl
    ]
    assert tsv[1].source == "popqa-like.tsv:3"


def test_nq_open_preset_ids_from_file_and_line() -> None:
    questions = NQOpenQuestions(NQOpenSettings(paths=(str(DATA / "nq-open-like.jsonl"),))).load()
    assert [q.id for q in questions] == ["nq-open-like:1", "nq-open-like:2", "nq-open-like:3"]
    assert questions[0].answer == "Maro Ilent"
    assert questions[0].aliases == ["Maro Ilent", "Maro Ilent the Younger"]
    assert questions[2].aliases == ["three", "3"]


def test_custom_fields_nested_and_a_json_string_of_aliases(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mine.jsonl",
        [
            {"meta": {"qid": "x1"}, "q": "Who built the Tarn bridge?", "gold": "Ilse Marr",
             "alts": '["I. Marr", "Ilse Marr"]'},
            {"meta": {"qid": "x2"}, "q": "Which river runs by Odd?", "gold": "the Wend",
             "alts": ["Wend"]},
        ],
    )  # fmt: skip
    settings = FieldQuestionsSettings(
        paths=(str(path),), id_field="meta.qid", question_field="q", answer_field="gold",
        aliases_field="alts",
    )  # fmt: skip
    questions = FieldQuestions(settings).load()
    assert [(q.id, q.answer, q.aliases) for q in questions] == [
        ("x1", "Ilse Marr", ["Ilse Marr", "I. Marr"]),
        ("x2", "the Wend", ["the Wend", "Wend"]),
    ]


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"possible_answers": '["a"]', "id": 1}, "question", "no field 'question'"),
        ({"question": "Q?", "id": 1}, "possible_answers", "no field 'possible_answers'"),
        ({"question": "Q?", "id": 1, "possible_answers": '["a", '}, "possible_answers",
         "not a valid JSON list"),
        ({"question": "Q?", "id": 1, "possible_answers": "[]"}, "possible_answers",
         "missing or empty answer"),
        ({"question": "", "id": 1, "possible_answers": '["a"]'}, "question",
         "missing or empty question"),
        ({"question": "Q?", "id": 1, "possible_answers": '["--"]'}, "possible_answers",
         "no alias with a word"),
    ],
)  # fmt: skip
def test_bad_popqa_rows_name_file_line_and_field(
    tmp_path: Path, row: dict, field: str, message: str
) -> None:
    good = {"question": "Where is Tessaly?", "id": 7, "possible_answers": '["Marrow Isles"]'}
    path = write(tmp_path / "bad.jsonl", [good, row])
    with pytest.raises(InputError, match=message) as info:
        PopQAQuestions(PopQASettings(paths=(str(path),))).load()
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)


def test_aliases_of_the_wrong_type_and_duplicate_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", [{"question": "Q?", "answer": "A", "alts": 5}])
    settings = FieldQuestionsSettings(paths=(str(path),), aliases_field="alts")
    with pytest.raises(InputError, match=r"expected a list of aliases.*got int") as info:
        FieldQuestions(settings).load()
    assert info.value.field == "alts"
    rows = [{"id": "same", "question": "Q?", "answer": "A"}] * 2
    path = write(tmp_path / "dup.jsonl", rows)
    with pytest.raises(InputError, match="duplicate question id 'same'") as info:
        FieldQuestions(FieldQuestionsSettings(paths=(str(path),), id_field="id")).load()
    assert info.value.line == 2


def test_pools_of_the_presets_from_a_config_and_the_registry() -> None:
    config = read_config(
        {
            "pool.dev": {"source": "popqa", "paths": str(DATA / "popqa-like.jsonl"), "limit": "2"},
            "pool.nq": {"source": "nq-open", "paths": str(DATA / "nq-open-like.jsonl")},
        }
    )
    popqa = config.pool("dev")
    assert isinstance(popqa.settings, PopQASettings) and popqa.limit == 2
    source = QUESTION_SOURCES.create("popqa", popqa.settings)
    assert [q.id for q in source.load()] == ["4101", "4102", "4103", "4104"]
    assert isinstance(source, FromFiles) and source.files == [DATA / "popqa-like.jsonl"]
    assert isinstance(config.pool("nq").settings, NQOpenSettings)
    assert QUESTION_SOURCES.resolve("nq-open") is NQOpenQuestions
    assert QUESTION_SOURCES.resolve("fields") is FieldQuestions
    with pytest.raises(ConfigError, match=r"\[pool.dev\] unknown key 'answer_feld'.*answer_field"):
        read_config({"pool.dev": {"source": "fields", "paths": "x.jsonl", "answer_feld": "a"}})
    with pytest.raises(ConfigError, match="set `paths`"):
        FieldQuestions(FieldQuestionsSettings())


def test_a_local_dataset_folder_through_datasets(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "nq"
    folder.mkdir()
    shutil.copy(DATA / "nq-open-like.jsonl", folder / "train.jsonl")
    settings = NQOpenSettings(name=os.fspath(folder), split="train")
    questions = NQOpenQuestions(settings).load()
    assert [q.id for q in questions] == [f"{folder}:train:{i}" for i in range(3)]
    assert questions[1].answer == "1907"


def test_prompts_read_as_questions_are_counted_and_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = FieldQuestionsSettings(
        paths=(str(DATA / "llm-foundry.jsonl"),), question_field="context", aliases_field="aliases"
    )
    source = FieldQuestions(settings)
    questions = source.load()
    assert questions[0].text.startswith("Question: ")
    assert source.stats.counts["prompt_questions"] == len(questions)
    assert "use source = llm-foundry-jsonl" in caplog.text


JOINED = [
    {"question": "who wrote the saltmarsh suite?", "answer": "Marigold Perrault<OR>M. Perrault"},
    {"question": "which river runs by vellmar?", "answer": "the Quellen|Quellen"},
]


def test_alias_separator_splits_joined_answers_into_aliases(tmp_path: Path) -> None:
    path = write(tmp_path / "joined.jsonl", JOINED[:1])
    settings = FieldQuestionsSettings(paths=(str(path),), alias_separator="<OR>")
    (question,) = FieldQuestions(settings).load()
    assert question.answer == "Marigold Perrault"
    assert question.aliases == ["Marigold Perrault", "M. Perrault"]


def test_an_answer_holding_a_likely_separator_is_counted_and_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path / "joined.jsonl", JOINED)
    source = FieldQuestions(FieldQuestionsSettings(paths=(str(path),)))
    with caplog.at_level("WARNING"):
        source.load()
    assert source.stats.counts["answers_with_separator"] == 2
    assert "2 answers hold a likely alias separator" in caplog.text
    assert f"{path}, line 1" in caplog.text and "alias_separator = <OR>" in caplog.text


def test_a_semicolon_or_slash_in_an_answer_is_no_false_alarm(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = [
        {"question": "who?", "answer": "Rosenberg, Julius; and Rosenberg, Ethel"},
        {"question": "what?", "answer": "Macbeth / The Scottish Play"},
    ]
    source = FieldQuestions(FieldQuestionsSettings(paths=(str(write(tmp_path / "a.jsonl", rows)),)))
    with caplog.at_level("WARNING"):
        source.load()
    assert not source.stats.counts["answers_with_separator"] and "separator" not in caplog.text


def test_the_alias_separator_is_in_the_questions_fingerprint() -> None:
    base = {"pool.dev": {"source": "fields", "paths": "q.jsonl"}}
    split = {"pool.dev": {"source": "fields", "paths": "q.jsonl", "alias_separator": "<OR>"}}
    one, two = (read_config(sections).pools[0].identity() for sections in (base, split))
    assert one != two and two["alias_separator"] == "<OR>"
