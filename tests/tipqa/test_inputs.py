"""The run's inputs: the demo world, the corpus reader, the question pools."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tipqa.errors import ConfigError, InputError
from tipqa.inputs import POOL_KEYS, check_pool, make_world, open_corpus, prepare_questions
from tipqa.jsonl import read_json, read_records, write_records
from tipqa.records import Question

WORLD = {"documents": 300, "seed": 7, "files": 2}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("world")
    stats = make_world(WORLD, 10, out)
    assert stats.counts["documents"] == 300
    return out


def test_make_world_writes_world_and_stats(world: Path) -> None:
    assert sorted(p.name for p in (world / "corpus").iterdir()) == [
        "part-00000.jsonl",
        "part-00001.jsonl",
    ]
    info = read_json(world / "world.json")
    assert info["spec"]["k1"] == 10 and info["spec"]["seed"] == 7
    stats = read_json(world / "world.stats.json")
    assert stats["counts"]["documents"] == 300
    assert stats["counts"]["questions"] == len(read_records(world / "questions.jsonl", Question))


def test_demo_corpus_reads_the_world(world: Path) -> None:
    corpus = open_corpus({"source": "demo", "paths": ["ignored"]}, world)
    docs = list(corpus)
    assert len(docs) == 300
    assert docs[0].id == "demo-d0000000"


def test_files_corpus_with_derived_ids(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "one"}\n{"text": "two"}\n')
    settings = {"source": "files", "paths": [str(path)], "text_field": "text", "id_field": "",
                "name": "", "config": "", "split": "train"}  # fmt: skip
    docs = list(open_corpus(settings, tmp_path / "no-world"))
    assert [d.text for d in docs] == ["one", "two"]
    assert docs[0].id != docs[1].id and docs[0].id.endswith(":1")


def test_prepare_demo_questions_with_limit(world: Path, tmp_path: Path) -> None:
    out = tmp_path / "pool" / "questions.jsonl"
    stats = prepare_questions({"source": "demo", "limit": 5}, world, out)
    written = read_records(out, Question)
    assert written == read_records(world / "questions.jsonl", Question)[:5]
    assert stats.counts["written"] == 5
    assert read_json(tmp_path / "pool" / "questions.stats.json")["info"] == {"source": "demo"}


def test_prepare_questions_from_a_source(tmp_path: Path) -> None:
    source = tmp_path / "mine.jsonl"
    write_records(source, [Question(f"q{i}", f"Q{i}?", "A", ["A"]) for i in range(3)])
    out = tmp_path / "questions.jsonl"
    settings = {"source": "tipqa-jsonl", "paths": [str(source)], "limit": 0}
    stats = prepare_questions(settings, tmp_path / "no-world", out)
    assert [q.id for q in read_records(out, Question)] == ["q0", "q1", "q2"]
    assert stats.counts["written"] == 3
    assert stats.counts["questions"] == 3


def test_prepare_questions_bad_line_names_the_file(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_bytes(orjson.dumps({"id": "q", "text": "Q?"}) + b"\n")
    out = tmp_path / "questions.jsonl"
    with pytest.raises(InputError) as info:
        prepare_questions({"source": "tipqa-jsonl", "paths": [str(source)]}, tmp_path, out)
    assert (info.value.path, info.value.line) == (str(source), 1)
    assert not out.exists()


def test_check_pool_accepts_known_keys() -> None:
    check_pool("dev", {"source": "demo"})
    check_pool("train", {key: "x" for key in POOL_KEYS})


def test_check_pool_rejects_unknown_keys_and_missing_source() -> None:
    with pytest.raises(ConfigError, match=r"pool 'dev'.*unknown: lmit, pth"):
        check_pool("dev", {"source": "demo", "lmit": 5, "pth": "x"})
    with pytest.raises(ConfigError, match=r"pool 'train': needs 'source'"):
        check_pool("train", {"paths": ["x"]})
