"""Tests of the Hugging Face trivia_qa row layout: files, in-memory datasets, a local folder."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import datasets
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.offline_support import offline_error

from tipqa.core.errors import InputError
from tipqa.sources.questions import load_questions
from tipqa.sources.questions.hf import (
    HFRows,
    HubQuestions,
    HubQuestionSettings,
    questions_from_rows,
)

DATA = Path(__file__).parents[3] / "data" / "questions"
ROWS_FILE = DATA / "rc-nocontext.jsonl"

# The column layout of mandarjoshi/trivia_qa rc.nocontext (dataset card, dataset_info).
FEATURES = datasets.Features(
    {
        "question": datasets.Value("string"),
        "question_id": datasets.Value("string"),
        "question_source": datasets.Value("string"),
        "entity_pages": datasets.Sequence(
            {
                "doc_source": datasets.Value("string"),
                "filename": datasets.Value("string"),
                "title": datasets.Value("string"),
                "wiki_context": datasets.Value("string"),
            }
        ),
        "search_results": datasets.Sequence(
            {
                "description": datasets.Value("string"),
                "filename": datasets.Value("string"),
                "rank": datasets.Value("int32"),
                "title": datasets.Value("string"),
                "url": datasets.Value("string"),
                "search_context": datasets.Value("string"),
            }
        ),
        "answer": {
            "aliases": datasets.Sequence(datasets.Value("string")),
            "normalized_aliases": datasets.Sequence(datasets.Value("string")),
            "matched_wiki_entity_name": datasets.Value("string"),
            "normalized_matched_wiki_entity_name": datasets.Value("string"),
            "normalized_value": datasets.Value("string"),
            "type": datasets.Value("string"),
            "value": datasets.Value("string"),
        },
    }
)


def rows() -> list[dict]:
    """The authored rc.nocontext rows."""
    return [orjson.loads(line) for line in ROWS_FILE.read_bytes().splitlines()]


def dataset() -> datasets.Dataset:
    """The authored rows as an in-memory dataset with the real feature layout."""
    return datasets.Dataset.from_list(rows(), features=FEATURES)


EXPECTED = [
    (
        "qz_1",
        "Who composed the Saltmarsh Suite?",
        "Marigold Perrault",
        ["Marigold Perrault", "M. Perrault"],
    ),
    (
        "qz_4",
        "Which river do skaters cross at the old ferry landing?",
        "Quellen",
        ["Quellen", "River Quellen", "The Quellen"],
    ),
]


def summary(questions: list) -> list[tuple]:
    """(id, text, answer, aliases) of each question."""
    return [(q.id, q.text, q.answer, q.aliases) for q in questions]


def test_jsonl_rows_merge_the_repeated_domain_row() -> None:
    source = HFRows(ROWS_FILE)
    questions = source.load()
    assert summary(questions) == EXPECTED
    assert [q.source for q in questions] == ["rc-nocontext.jsonl:1", "rc-nocontext.jsonl:2"]
    assert source.stats.counts["merged_duplicates"] == 1


def test_in_memory_dataset_with_the_real_features() -> None:
    questions = questions_from_rows(
        dataset(), origin="mandarjoshi/trivia_qa:rc.nocontext:validation"
    )
    assert summary(questions) == EXPECTED
    assert questions[1].source == "mandarjoshi/trivia_qa:rc.nocontext:validation:1"


def test_parquet_and_gzip_rows(tmp_path: Path) -> None:
    parquet = tmp_path / "validation.parquet"
    dataset().to_parquet(str(parquet))
    assert summary(load_questions("hf-rows", paths=str(parquet))) == EXPECTED
    gz = tmp_path / "validation.jsonl.gz"
    gz.write_bytes(gzip.compress(ROWS_FILE.read_bytes()))
    assert summary(load_questions("hf-rows", paths=[gz])) == EXPECTED


def test_flattened_parquet_columns(tmp_path: Path) -> None:
    flat = [
        {"question_id": "f1", "question": "Q?", "answer.value": "Yes", "answer.aliases": ["Yep"]},
    ]
    path = tmp_path / "flat.parquet"
    pq.write_table(pa.Table.from_pylist(flat), path)
    assert summary(HFRows(path).load()) == [("f1", "Q?", "Yes", ["Yes", "Yep"])]


def test_local_dataset_folder_through_load_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "trivia"
    folder.mkdir()
    dataset().to_parquet(str(folder / "validation-00000-of-00001.parquet"))
    settings = HubQuestionSettings(str(folder), config=None, cache_dir=str(tmp_path / "c"))
    hub = HubQuestions(settings)
    assert summary(hub.load()) == EXPECTED
    assert hub.stats.counts["merged_duplicates"] == 1
    limited = HubQuestions(dataclasses.replace(settings, streaming=True), limit=1)
    assert summary(limited.load()) == EXPECTED[:1]


def test_conflicting_repeat_is_an_error(tmp_path: Path) -> None:
    data = rows()
    data[2]["answer"]["value"] = "Someone Else"
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in data))
    message = r"'qz_1' appears at rows\.jsonl:1 and rows\.jsonl:3"
    with pytest.raises(InputError, match=message) as info:
        HFRows(path).load()
    assert info.value.line == 3


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda r: r.pop("answer"), "answer.value", "missing or empty answer"),
        (lambda r: r.pop("question_id"), "question_id", "missing or empty question id"),
        (
            lambda r: r["answer"].update(value="<unk>", aliases=[], normalized_aliases=[]),
            None,
            None,
        ),
    ],
)
def test_bad_rows_name_file_line_and_field(
    tmp_path: Path, mutate, field: str | None, message: str | None
) -> None:
    data = rows()[:2]
    mutate(data[1])
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in data))
    if message is None:
        # "<unk>" tokenizes to "unk": the test split's placeholder answer is a word, so it loads.
        assert HFRows(path).load()[1].aliases == ["<unk>"]
        return
    with pytest.raises(InputError, match=message) as info:
        HFRows(path).load()
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(ROWS_FILE.read_bytes().splitlines()[0] + b"\n{broken\n")
    with pytest.raises(InputError, match="invalid JSON") as info:
        HFRows(path).load()
    assert info.value.line == 2


def test_hub_offline_gives_a_clear_error(tmp_path: Path) -> None:
    error = offline_error(
        "from tipqa.sources.questions import load_questions\n"
        f"load_questions('hub', split='validation', cache_dir={str(tmp_path)!r})"
    )
    assert error.startswith("mandarjoshi/trivia_qa:rc.nocontext:validation")
    assert "cannot load dataset" in error
