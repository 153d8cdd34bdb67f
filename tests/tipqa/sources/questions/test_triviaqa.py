"""Tests of the original TriviaQA release JSON source."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from tipqa.core.errors import InputError
from tipqa.sources.questions import load_questions
from tipqa.sources.questions.triviaqa import TriviaQAJson

DATA = Path(__file__).parents[3] / "data" / "questions"
SHARED = Path("/work/shared/data/triviaqa/official-sample/qa")


def release(tmp_path: Path, name: str, entries: list[object]) -> Path:
    """Write a release-layout file with `entries` in Data."""
    path = tmp_path / name
    path.write_bytes(orjson.dumps({"Data": entries, "Domain": "Web", "Split": "dev"}))
    return path


def entries() -> list[dict]:
    """The Data entries of the authored web-dev fixture."""
    return orjson.loads((DATA / "web-dev.json").read_bytes())["Data"]


def test_two_domain_files_merge_the_shared_question() -> None:
    source = TriviaQAJson(str(DATA / "*-dev.json"))
    questions = source.load()
    assert [(q.id, q.source) for q in questions] == [
        ("qz_1", "web-dev.json Data[0]"),
        ("qz_2", "web-dev.json Data[1]"),
        ("qz_3", "wikipedia-dev.json Data[1]"),
    ]
    assert questions[0].answer == "Marigold Perrault"
    assert questions[0].aliases == ["Marigold Perrault", "M. Perrault", "Perrault, Marigold"]
    assert questions[2].aliases == ["1931", "Nineteen thirty-one"]
    assert source.stats.counts["merged_duplicates"] == 1
    assert source.stats.counts["questions"] == 3


def test_same_id_conflicting_across_files_is_an_error(tmp_path: Path) -> None:
    first = release(tmp_path, "web-dev.json", entries())
    changed = copy.deepcopy(entries()[1])
    changed["Answer"]["Value"] = "Quellen"
    second = release(tmp_path, "wikipedia-dev.json", [changed])
    with pytest.raises(
        InputError,
        match=r"'qz_2' appears at web-dev\.json Data\[1\] and wikipedia-dev\.json Data\[0\]",
    ):
        load_questions("triviaqa-json", paths=[str(first), str(second)])


def test_duplicate_id_within_one_file_is_an_error(tmp_path: Path) -> None:
    path = release(tmp_path, "web-dev.json", [*entries(), entries()[0]])
    message = (
        r"duplicate question id 'qz_1' at web-dev\.json Data\[2\] "
        r"\(first at web-dev\.json Data\[0\]\)"
    )
    with pytest.raises(InputError, match=message) as info:
        TriviaQAJson(path).load()
    assert info.value.path == str(path)


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda e: e.pop("Answer"), "Answer", r"Data\[1\] \(id 'qz_2'\): missing Answer"),
        (lambda e: e.pop("Question"), "Question", "missing or empty question"),
        (lambda e: e.pop("QuestionId"), "QuestionId", "missing or empty question id"),
        (lambda e: e["Answer"].pop("Value"), "Answer.Value", "missing or empty answer"),
        (
            lambda e: e["Answer"].update(Value="...", Aliases=[], NormalizedAliases=["-"]),
            "Answer.Aliases",
            "no alias with a word",
        ),
    ],
)
def test_bad_entries_name_file_record_and_field(
    tmp_path: Path, mutate, field: str, message: str
) -> None:
    data = entries()
    mutate(data[1])
    path = release(tmp_path, "web-dev.json", data)
    with pytest.raises(InputError, match=message) as info:
        TriviaQAJson(path).load()
    assert info.value.field == field
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"), [(b"{not json", "invalid JSON"), (b"[]", "'Data' list")]
)
def test_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "web-dev.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        TriviaQAJson(path).load()


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared sample data absent")
def test_real_release_sample() -> None:
    source = TriviaQAJson(str(SHARED / "*.json"))
    questions = source.load()
    assert len(questions) == 9
    assert len({q.id for q in questions}) == 9
    assert source.stats.counts["merged_duplicates"] == 2
    for q in questions:
        assert q.aliases[0] == q.answer
        assert q.source.split(" ")[0].endswith(".json")
