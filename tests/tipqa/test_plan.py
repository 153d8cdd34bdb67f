"""The build plan: which setting changes which step's fingerprint, and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tipqa.config import read_config
from tipqa.errors import ConfigError
from tipqa.layout import (
    ANNOTATION_EXPORT,
    COST_PREVIEW,
    HUB_FOLDER,
    KEYWORDS,
    PARTITION,
    QUESTIONS,
    REPORT,
    SPLITS,
    TOKEN_INDEX,
    TOKEN_JUDGE,
    TOKEN_SEARCH,
    VECTOR_INDEX,
    VECTOR_JUDGE,
    VECTOR_SEARCH,
)
from tipqa.plan import Plan

LOCAL = "http://127.0.0.1:9/v1"
AFTER_JUDGING = {PARTITION, SPLITS, HUB_FOLDER, REPORT, ANNOTATION_EXPORT}
FROM_VECTOR_SEARCH = {VECTOR_SEARCH, VECTOR_JUDGE, *AFTER_JUDGING}
FROM_TOKEN_JUDGE = {TOKEN_JUDGE, *FROM_VECTOR_SEARCH, COST_PREVIEW}
FROM_TOKEN_SEARCH = {TOKEN_SEARCH, *FROM_TOKEN_JUDGE}
SHARD_STEPS_ON = {KEYWORDS, *FROM_TOKEN_SEARCH}


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """A corpus file, a questions file and a judge prompt of our own."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "text": "Kellan Dusk was born in Varnholt."}\n')
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"id": "q1", "text": "Where was Kellan Dusk born?", "answer": "Varnholt", '
        '"aliases": ["Varnholt"]}\n'
    )
    prompt = tmp_path / "judge.txt"
    prompt.write_text("Text: {document}\nQuestion: {question}\nAnswer: {answer}\nyes or no?")
    return {"corpus": corpus, "questions": questions, "prompt": prompt}


def base(inputs: dict[str, Path]) -> dict[str, dict[str, str]]:
    """A configuration that reads real files (no demo world, which depends on k1)."""
    return {
        "corpus": {"source": "files", "paths": str(inputs["corpus"])},
        "pool.dev": {"source": "tipqa-jsonl", "paths": str(inputs["questions"])},
        "judge": {"backend": "openai", "model": "judge-a", "base_url": LOCAL,
                  "prompt": str(inputs["prompt"])},
    }  # fmt: skip


def fingerprints(sections: dict[str, dict[str, str]]) -> dict[str, str]:
    """Every step's fingerprint for these settings (shard 0 for the shard steps)."""
    plan = Plan(read_config(sections))
    steps = {
        QUESTIONS: plan.questions("dev"),
        TOKEN_INDEX: plan.token_index,
        VECTOR_INDEX: plan.vector_index,
        PARTITION: plan.partition("dev"),
        SPLITS: plan.splits,
        HUB_FOLDER: plan.hub_folder,
        REPORT: plan.report,
        COST_PREVIEW: plan.cost_preview("dev"),
        ANNOTATION_EXPORT: plan.annotation_export,
    }
    for step in (KEYWORDS, TOKEN_SEARCH, TOKEN_JUDGE, VECTOR_SEARCH, VECTOR_JUDGE):
        steps[step] = plan.shard("dev", step, 0)
    return {name: record.fingerprint for name, record in steps.items()}


def changed(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> set[str]:
    old, new = fingerprints(before), fingerprints(after)
    return {step for step in old if old[step] != new[step]}


def merged(sections: dict, section: str, **values: str) -> dict:
    return {**sections, section: {**sections.get(section, {}), **values}}


# what is changed -> (section, key, value) -> the steps that must run again
CHANGES = [
    ("judge backend", "judge", None, FROM_TOKEN_JUDGE),
    ("judge model", "judge", {"model": "judge-b"}, FROM_TOKEN_JUDGE),
    ("judge mode", "judge", {"mode": "choice"}, FROM_TOKEN_JUDGE),
    ("judge max_tokens", "judge", {"max_tokens": "3"}, FROM_TOKEN_JUDGE),
    ("max_words", "judge", {"max_words": "400"}, FROM_TOKEN_JUDGE),
    ("max_windows", "judge", {"max_windows": "4"}, FROM_TOKEN_JUDGE),
    ("keyword backend", "keywords", {"backend": "openai", "base_url": LOCAL}, SHARD_STEPS_ON),
    ("k1", "build", {"k1": "50"}, FROM_TOKEN_SEARCH),
    ("k2", "build", {"k2": "5"}, FROM_VECTOR_SEARCH | {COST_PREVIEW}),
    ("shard_size", "build", {"shard_size": "3"}, {QUESTIONS, *SHARD_STEPS_ON}),
    ("tantivy rank_pool", "token_index", {"rank_pool": "50"}, FROM_TOKEN_SEARCH),
    ("embedder model", "embedder", {"model": "other/model"},
     {VECTOR_INDEX, *FROM_VECTOR_SEARCH, COST_PREVIEW}),
    ("query prefix", "embedder", {"query_prefix": '"query: "'},
     FROM_VECTOR_SEARCH | {COST_PREVIEW}),
    ("passage prefix", "embedder", {"passage_prefix": '"passage: "'},
     {VECTOR_INDEX, *FROM_VECTOR_SEARCH, COST_PREVIEW}),
    ("HNSW M", "vector_index", {"hnsw_m": "16"}, {VECTOR_INDEX, *FROM_VECTOR_SEARCH}),
    ("efSearch", "vector_index", {"ef_search": "64"}, FROM_VECTOR_SEARCH),
    ("chunk overlap", "vector_index", {"chunk_overlap_tokens": "16"},
     {VECTOR_INDEX, *FROM_VECTOR_SEARCH}),
    ("pool limit", "pool.dev", {"limit": "1"}, {QUESTIONS, *SHARD_STEPS_ON}),
    ("splits seed", "splits", {"seed": "3"}, {SPLITS, HUB_FOLDER, REPORT}),
    ("card name", "hub", {"pretty_name": "Mine"}, {HUB_FOLDER}),
    ("annotation sample", "annotation", {"triplets": "100"}, {ANNOTATION_EXPORT}),
    ("judge concurrency (a knob)", "judge", {"max_concurrency": "2", "timeout": "5"}, set()),
    ("judge server (a knob)", "judge", {"base_url": "http://127.0.0.1:8/v1"}, set()),
    ("tantivy threads (knobs)", "token_index", {"threads": "1", "heap_mb": "64"}, set()),
    ("embedder batch (a knob)", "embedder", {"batch_size": "8", "device": "cuda"}, set()),
    ("LLM cache (a knob)", "judge", {"cache": "false"}, set()),
    ("run name (a knob)", "build", {"name": "other", "output_root": "elsewhere"}, set()),
    ("publishing (knobs)", "hub", {"repo_id": "me/x", "private": "false"}, set()),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "section", "values", "expected"), CHANGES, ids=[c[0] for c in CHANGES]
)
def test_a_setting_changes_exactly_the_steps_it_decides(
    inputs: dict[str, Path],
    what: str,
    section: str,
    values: dict[str, str] | None,
    expected: set[str],
) -> None:
    sections = base(inputs)
    after = merged(sections, section, **values) if values else {**sections, section: {}}
    assert changed(sections, after) == expected, what


def test_the_prompt_counts_by_its_content_not_its_name(inputs: dict[str, Path]) -> None:
    sections = base(inputs)
    before = fingerprints(sections)
    inputs["prompt"].write_text(inputs["prompt"].read_text() + "\nReply with one word.")
    after = fingerprints(sections)
    assert {step for step in before if before[step] != after[step]} == FROM_TOKEN_JUDGE
    copy = inputs["prompt"].with_name("copy.txt")
    copy.write_text(inputs["prompt"].read_text())
    renamed = fingerprints(merged(sections, "judge", prompt=str(copy)))
    assert {step for step in after if after[step] != renamed[step]} == FROM_TOKEN_JUDGE


def test_corpus_files_count_by_size_and_time(inputs: dict[str, Path]) -> None:
    sections = base(inputs)
    before = fingerprints(sections)
    corpus = inputs["corpus"]
    corpus.write_text(corpus.read_text() + '{"id": "d2", "text": "Varnholt is a town."}\n')
    after = fingerprints(sections)
    assert {s for s in before if before[s] != after[s]} == {
        TOKEN_INDEX, VECTOR_INDEX, *FROM_TOKEN_SEARCH,
    }  # fmt: skip
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert fingerprints(sections)[TOKEN_INDEX] != after[TOKEN_INDEX]


def test_question_files_count_by_content(inputs: dict[str, Path]) -> None:
    sections = base(inputs)
    before = fingerprints(sections)
    questions = inputs["questions"]
    stat = questions.stat()
    os.utime(questions, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert fingerprints(sections) == before
    questions.write_text(questions.read_text().replace("Kellan", "Kellen"))
    assert {s for s, fp in fingerprints(sections).items() if fp != before[s]} == {
        QUESTIONS, *SHARD_STEPS_ON,
    }  # fmt: skip


def test_shards_differ_and_records_say_what_decided_them(inputs: dict[str, Path]) -> None:
    plan = Plan(read_config(base(inputs)))
    first, second = plan.shard("dev", TOKEN_JUDGE, 0), plan.shard("dev", TOKEN_JUDGE, 1)
    assert first.fingerprint != second.fingerprint
    assert first.settings == second.settings
    judge = first.settings["judge"]
    assert judge["backend"] == "openai" and judge["model"] == "judge-a"
    assert len(judge["prompt_sha256"]) == 64 and "base_url" not in judge
    assert first.inputs[TOKEN_SEARCH] == plan.pool_step("dev", TOKEN_SEARCH).fingerprint


def test_an_elasticsearch_cluster_is_part_of_the_index_without_credentials(
    inputs: dict[str, Path],
) -> None:
    sections = {
        **base(inputs),
        "token_index": {"backend": "elasticsearch"},
        "elasticsearch": {"url": "https://user:secret@es.example:9200"},
    }
    record = Plan(read_config(sections)).token_index
    assert record.inputs["elasticsearch"] == {"cluster": "https://es.example:9200"}
    assert "secret" not in str(record.provenance())
    other = merged(sections, "elasticsearch", url="https://es2.example:9200")
    assert Plan(read_config(other)).token_index.fingerprint != record.fingerprint
    with pytest.raises(ConfigError, match="TIPQA_ES_URL"):
        _ = Plan(read_config(merged(sections, "elasticsearch", url=""))).token_index
