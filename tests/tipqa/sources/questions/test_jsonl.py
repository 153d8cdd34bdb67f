"""Tests of our own Question JSONL and of llm-foundry's TriviaQA JSONL."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import zstandard

from tipqa.core.errors import InputError
from tipqa.core.jsonl import write_records
from tipqa.core.text import tokenize
from tipqa.llm.keywords.rules import extract_keywords
from tipqa.sources.questions import load_questions
from tipqa.sources.questions.jsonl import LLMFoundryJsonl, TipqaJsonl

DATA = Path(__file__).parents[3] / "data" / "questions"
SHARED = Path("/work/shared/data/triviaqa/llm-foundry-triviaqa-3000.jsonl")


def write(path: Path, rows: list[object]) -> Path:
    """Write rows as JSON lines."""
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_tipqa_records_round_trip(tmp_path: Path) -> None:
    questions = load_questions("tipqa-jsonl", paths=str(DATA / "questions.jsonl"))
    assert [(q.id, q.source) for q in questions] == [
        ("qz_1", "web-dev.json:0"),
        ("qz_4", "questions.jsonl:2"),
    ]
    written = tmp_path / "out.jsonl"
    write_records(written, questions)
    assert TipqaJsonl(written).load() == questions


def test_blank_lines_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_bytes(b"\n" + (DATA / "questions.jsonl").read_bytes().replace(b"\n", b"\n  \n", 1))
    source = TipqaJsonl(path)
    assert len(source.load()) == 2
    assert source.stats.counts["blank_lines"] == 2


def test_tipqa_duplicate_ids_are_an_error(tmp_path: Path) -> None:
    lines = (DATA / "questions.jsonl").read_bytes().splitlines()
    path = tmp_path / "dup.jsonl"
    path.write_bytes(b"\n".join([*lines, lines[0]]) + b"\n")
    with pytest.raises(InputError, match="duplicate question id 'qz_1'") as info:
        TipqaJsonl(path).load()
    assert info.value.line == 3


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        (
            {"id": "a", "text": "Q?", "answer": "A"},
            "aliases",
            "expected a list of aliases, got nothing",
        ),
        ({"id": "a", "text": "Q?", "answer": "A", "aliases": "A"}, "aliases", "got str"),
        (
            {"id": "a", "text": "Q?", "answer": "--", "aliases": ["?"]},
            "aliases",
            "no alias with a word",
        ),
        ({"id": "a", "answer": "A", "aliases": ["A"]}, "text", "missing or empty question"),
    ],
)
def test_tipqa_bad_records(tmp_path: Path, row: dict, field: str, message: str) -> None:
    path = write(tmp_path / "q.jsonl", [row])
    with pytest.raises(InputError, match=message) as info:
        TipqaJsonl(path).load()
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 1, field)


def test_llm_foundry_ids_from_file_and_line(tmp_path: Path) -> None:
    source = LLMFoundryJsonl(DATA / "llm-foundry.jsonl")
    questions = source.load()
    assert [(q.id, q.text, q.answer, q.aliases) for q in questions] == [
        (
            "llm-foundry:1",
            "Who composed the Saltmarsh Suite?",
            "Marigold Perrault",
            ["Marigold Perrault", "M. Perrault"],
        ),
        (
            "llm-foundry:2",
            "Which river do skaters cross at the old ferry landing?",
            "Quellen",
            ["Quellen", "River Quellen"],
        ),
    ]
    compressed = tmp_path / "llm-foundry.jsonl.zst"
    compressed.write_bytes(
        zstandard.ZstdCompressor().compress((DATA / "llm-foundry.jsonl").read_bytes())
    )
    again = LLMFoundryJsonl(compressed).load()
    assert [(q.id, q.aliases) for q in again] == [(q.id, q.aliases) for q in questions]
    assert [q.source for q in again] == ["llm-foundry.jsonl.zst:1", "llm-foundry.jsonl.zst:2"]


def test_llm_foundry_bad_context(tmp_path: Path) -> None:
    path = write(tmp_path / "f.jsonl", [{"context": "Who?", "answer": "A", "aliases": ["A"]}])
    with pytest.raises(InputError, match=r"Question: \.\.\.") as info:
        LLMFoundryJsonl(path).load()
    assert (info.value.line, info.value.field) == (1, "context")


@pytest.mark.skipif(not SHARED.is_file(), reason="shared sample data absent")
def test_real_llm_foundry_file() -> None:
    questions = load_questions("llm-foundry-jsonl", paths=str(SHARED))
    assert len(questions) == 3000
    assert all(q.text and not q.text.startswith("Question:") and q.aliases for q in questions)
    # Only answers without a word token (such as a currency sign) are not their own first alias.
    odd = [q for q in questions if q.aliases[0] != q.answer]
    assert len(odd) < 5 and all(not tokenize(q.answer) for q in odd)
    assert questions[41].id == "llm-foundry-triviaqa-3000:42"
    # 198 questions were CSV-quoted (three with an opening quote glued to a word); none keeps
    # a doubled quote.
    source = LLMFoundryJsonl(SHARED)
    source.load()
    assert source.stats.counts["csv_quoted_questions"] == 198
    assert source.stats.counts["quote_spaces_added"] == 3
    assert not [q for q in questions if '""' in q.text or any('""' in a for a in q.aliases)]


def test_llm_foundry_csv_quoting_is_read_as_written(tmp_path: Path) -> None:
    rows = [
        {
            "context": 'Question: "Which club is called the""Grey Herons""?"\nAnswer:',
            "answer": "Tallow Rovers",
            "aliases": ["Tallow Rovers", "The Herons"],
        },
        {
            "context": 'Question: """Fair winds follow the brave"" is whose motto?"\nAnswer:',
            "answer": '"""Captain"" Orla Venn"',
            "aliases": ['"""Captain"" Orla Venn"', "Orla Venn"],
        },
        {
            "context": 'Question: Who wrote "The Lantern Keeper"?\nAnswer:',
            "answer": "Ada Morrow",
            "aliases": ["Ada Morrow"],
        },
    ]
    source = LLMFoundryJsonl(write(tmp_path / "foundry.jsonl", rows))
    herons, motto, lantern = source.load()
    assert herons.text == 'Which club is called the "Grey Herons"?'
    assert motto.text == '"Fair winds follow the brave" is whose motto?'
    assert motto.answer == '"Captain" Orla Venn'
    assert motto.aliases == ['"Captain" Orla Venn', "Orla Venn"]
    assert lantern.text == 'Who wrote "The Lantern Keeper"?'
    counts = source.stats.counts
    assert counts["csv_quoted_questions"] == 2
    assert counts["quote_spaces_added"] == 1
    assert counts["csv_quoted_answers"] == 2
    assert extract_keywords(herons.text) == ["Grey Herons"]
    assert extract_keywords(motto.text) == ["Fair winds follow the brave"]
