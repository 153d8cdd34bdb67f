"""The run's inputs: the demo world, the corpus reader, the question pools."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tipqa.builder.inputs import (
    make_world,
    open_corpus,
    prepare_questions,
    shard_count,
)
from tipqa.builder.step_inputs import QuestionsInputs, WorldInputs
from tipqa.config import read_config
from tipqa.config.pools import Pool
from tipqa.core.errors import InputError
from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import Question
from tipqa.sources.demo.world import DemoSettings

WORLD = DemoSettings(documents=300, seed=7, files=2)


def questions_inputs(pool: Pool, shard_size: int) -> QuestionsInputs:
    """A pool's questions' inputs for a test (any raw input will do)."""
    return QuestionsInputs(pool, shard_size, {"test": True})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunLayout:
    layout = RunLayout(tmp_path_factory.mktemp("run"))
    stats = make_world(WorldInputs(WORLD, 10), layout)
    assert stats.counts["documents"] == 300
    return layout


def test_make_world_writes_world_and_stats(run: RunLayout) -> None:
    assert sorted(p.name for p in run.world.corpus.iterdir()) == [
        "part-00000.jsonl",
        "part-00001.jsonl",
    ]
    info = read_json(run.world.spec)
    assert info["spec"]["k1"] == 10 and info["spec"]["seed"] == 7
    stats = read_json(run.world.stats)
    assert stats["counts"]["documents"] == 300
    assert stats["counts"]["questions"] == len(read_records(run.world.questions, Question))


def test_demo_corpus_reads_the_world(run: RunLayout) -> None:
    docs = list(open_corpus(read_config({}).corpus, run))
    assert len(docs) == 300
    assert docs[0].id == "demo-d0000000"


def test_files_corpus_with_derived_ids(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "one"}\n{"text": "two"}\n')
    corpus = read_config({"corpus": {"source": "files", "paths": str(path), "id_field": ""}})
    docs = list(open_corpus(corpus.corpus, RunLayout(tmp_path / "no-run")))
    assert [d.text for d in docs] == ["one", "two"]
    assert docs[0].id != docs[1].id and docs[0].id.endswith(":1")


def test_prepare_demo_questions_with_limit_and_shards(run: RunLayout) -> None:
    pool = read_config({"pool.dev": {"source": "demo", "limit": "5"}}).pool("dev")
    inputs = questions_inputs(pool, 2)
    stats = prepare_questions(inputs, run)
    layout = run.pool("dev")
    written = read_records(layout.questions, Question)
    assert written == read_records(run.world.questions, Question)[:5]
    assert stats.counts["written"] == 5 and stats.counts["shards"] == 3
    assert [len(read_records(layout.shard(i).questions, Question)) for i in range(3)] == [2, 2, 1]
    assert shard_count(layout) == 3
    recorded = read_json(layout.questions_stats)
    assert recorded["info"] == {"source": "demo"}
    assert recorded["fingerprint"] == inputs.record.fingerprint


def test_prepare_questions_again_drops_old_shards(run: RunLayout) -> None:
    pool = read_config({"pool.dev": {"source": "demo", "limit": "6"}}).pool("dev")
    prepare_questions(questions_inputs(pool, 2), run)
    prepare_questions(questions_inputs(pool, 3), run)
    assert sorted(p.name for p in run.pool("dev").shards.iterdir()) == [
        "shard-00000",
        "shard-00001",
    ]


def test_prepare_questions_from_a_source(tmp_path: Path) -> None:
    source = tmp_path / "mine.jsonl"
    write_records(source, [Question(f"q{i}", f"Q{i}?", "A", ["A"]) for i in range(3)])
    sections = {"pool.dev": {"source": "tipqa-jsonl", "paths": str(source)}}
    run = RunLayout(tmp_path / "run")
    stats = prepare_questions(questions_inputs(read_config(sections).pool("dev"), 10), run)
    assert [q.id for q in read_records(run.pool("dev").questions, Question)] == ["q0", "q1", "q2"]
    assert stats.counts["written"] == 3
    assert stats.counts["questions"] == 3


def test_prepare_questions_bad_line_names_the_file(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_bytes(orjson.dumps({"id": "q", "text": "Q?"}) + b"\n")
    sections = {"pool.dev": {"source": "tipqa-jsonl", "paths": str(source)}}
    run = RunLayout(tmp_path / "run")
    with pytest.raises(InputError) as info:
        prepare_questions(questions_inputs(read_config(sections).pool("dev"), 10), run)
    assert (info.value.path, info.value.line) == (str(source), 1)
    assert not run.pool("dev").questions.exists()


def test_an_empty_pool_is_an_error_naming_the_file(tmp_path: Path) -> None:
    source = tmp_path / "empty.jsonl"
    source.write_bytes(b"\n")
    sections = {"pool.dev": {"source": "tipqa-jsonl", "paths": str(source)}}
    run = RunLayout(tmp_path / "run")
    with pytest.raises(InputError, match=r"empty\.jsonl: question pool 'dev' has no questions"):
        prepare_questions(questions_inputs(read_config(sections).pool("dev"), 10), run)
    assert not run.pool("dev").questions_stats.exists()


GOOD_ROWS = {
    "tipqa-jsonl": [
        {"id": f"q{i}", "text": f"Q{i}?", "answer": "A", "aliases": []} for i in range(3)
    ],
    "llm-foundry-jsonl": [
        {"context": f"Question: Q{i}?\nAnswer:", "answer": "A", "aliases": ["A"]} for i in range(3)
    ],
    "fields": [{"question": f"Q{i}?", "answer": "A"} for i in range(3)],
    "hf-rows": [
        {"question": f"Q{i}?", "question_id": f"q{i}", "answer": {"value": "A", "aliases": ["A"]}}
        for i in range(3)
    ],
}


@pytest.mark.parametrize("source", sorted(GOOD_ROWS))
def test_a_pool_limit_stops_reading_at_its_last_question(tmp_path: Path, source: str) -> None:
    """The lines after the limit are not read: a bad one there is no error."""
    path = tmp_path / "questions.jsonl"
    lines = [orjson.dumps(row) for row in GOOD_ROWS[source]]
    path.write_bytes(b"\n".join([*lines, b'{"not json at all', b"\xff\xfe"]) + b"\n")
    sections = {"pool.dev": {"source": source, "paths": str(path), "limit": "2"}}
    run = RunLayout(tmp_path / "run")
    stats = prepare_questions(questions_inputs(read_config(sections).pool("dev"), 10), run)
    assert stats.counts["written"] == 2 and stats.counts["questions"] == 2
    unlimited = {"pool.dev": {"source": source, "paths": str(path)}}
    with pytest.raises(InputError, match="line 4"):
        prepare_questions(questions_inputs(read_config(unlimited).pool("dev"), 10), run)


def test_a_pool_limit_stops_reading_triviaqa_files_at_its_last_question(tmp_path: Path) -> None:
    entry = {"QuestionId": "q0", "Question": "Q0?", "Answer": {"Value": "A", "Aliases": ["A"]}}
    first = tmp_path / "a-dev.json"
    first.write_bytes(orjson.dumps({"Data": [entry, {**entry, "QuestionId": "q1"}]}))
    (tmp_path / "b-dev.json").write_bytes(b"{not json")
    sections = {"pool.dev": {"source": "triviaqa-json", "paths": str(tmp_path), "limit": "2"}}
    run = RunLayout(tmp_path / "run")
    stats = prepare_questions(questions_inputs(read_config(sections).pool("dev"), 10), run)
    assert stats.counts["written"] == 2
