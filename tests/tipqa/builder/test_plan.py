"""The build plan: which setting changes which step's fingerprint, and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.plan_support import (
    EVALUATION,
    FROM_TOKEN_JUDGE,
    FROM_TOKEN_SEARCH,
    FROM_VECTOR_SEARCH,
    LABEL_STUDIO,
    LOCAL,
    SHARD_STEPS_ON,
    base,
    changed,
    fingerprints,
    merged,
    write_inputs,
)

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.steps import Step
from tipqa.evaluate.score import SCORER_VERSION


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """A corpus file, a questions file and a judge prompt of our own."""
    return write_inputs(tmp_path)


# what is changed -> (section, key, value) -> the steps that must run again
CHANGES = [
    ("judge backend", "judge", None, FROM_TOKEN_JUDGE),
    ("judge model", "judge", {"model": "judge-b"}, FROM_TOKEN_JUDGE),
    ("judge mode", "judge", {"mode": "choice"}, FROM_TOKEN_JUDGE),
    ("judge max_tokens", "judge", {"max_tokens": "3"}, FROM_TOKEN_JUDGE),
    ("a confirming judge", "judge.confirm", {"model": "judge-b"}, FROM_TOKEN_JUDGE),
    ("a confirming judge like the build's", "judge.confirm", None, FROM_TOKEN_JUDGE),
    ("max_words", "judge", {"max_words": "400"}, FROM_TOKEN_JUDGE),
    ("max_windows", "judge", {"max_windows": "4"}, FROM_TOKEN_JUDGE),
    ("keyword backend", "keywords", {"backend": "openai", "base_url": LOCAL}, SHARD_STEPS_ON),
    ("k1", "build", {"k1": "50"}, FROM_TOKEN_SEARCH),
    ("k2", "build", {"k2": "5"}, FROM_VECTOR_SEARCH | {Step.COST_PREVIEW}),
    ("shard_size", "build", {"shard_size": "3"}, {Step.QUESTIONS, Step.VERBATIM, *SHARD_STEPS_ON}),
    ("tantivy rank_pool", "token_index", {"rank_pool": "50"},
     {Step.VERBATIM, *FROM_TOKEN_SEARCH}),
    ("embedder model", "embedder", {"model": "other/model"},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH, Step.COST_PREVIEW}),
    ("query prefix", "embedder", {"query_prefix": '"query: "'},
     FROM_VECTOR_SEARCH | {Step.COST_PREVIEW}),
    ("passage prefix", "embedder", {"passage_prefix": '"passage: "'},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH, Step.COST_PREVIEW}),
    ("embedder runtime", "embedder", {"runtime": "torch"},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH, Step.COST_PREVIEW}),
    ("embedder precision", "embedder", {"runtime": "torch", "precision": "bf16"},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH, Step.COST_PREVIEW}),
    ("device under runtime auto", "embedder", {"device": "cuda"},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH, Step.COST_PREVIEW}),
    ("what auto means, spelled out", "embedder", {"runtime": "onnx", "precision": "fp32"}, set()),
    ("faiss kind", "vector_index", {"kind": "flat"}, {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH}),
    ("HNSW settings under pq-rerank (not read)", "vector_index",
     {"hnsw_m": "16", "ef_construction": "200", "ef_search": "64"}, set()),
    ("PQ dims", "vector_index", {"pq_dims": "4"}, {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH}),
    ("rerank", "vector_index", {"rerank": "10"}, FROM_VECTOR_SEARCH),
    ("chunk overlap", "vector_index", {"chunk_overlap_tokens": "16"},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH}),
    ("pool limit", "pool.dev", {"limit": "1"}, {Step.QUESTIONS, Step.VERBATIM, *SHARD_STEPS_ON}),
    ("splits seed", "splits", {"seed": "3"},
     {Step.SPLITS, Step.HUB_FOLDER, Step.REPORT, *EVALUATION}),
    ("card name", "hub", {"pretty_name": "Mine"}, {Step.HUB_FOLDER}),
    ("annotation sample", "annotation", {"triplets": "100"},
     {Step.ANNOTATION_EXPORT, *LABEL_STUDIO}),
    ("Label Studio projects", "labelstudio", {"project_prefix": "paper"}, LABEL_STUDIO),
    ("answerer model", "evaluate.openai", {"model": "other"}, EVALUATION),
    ("answerer max_tokens", "evaluate.openai", {"max_tokens": "16"}, EVALUATION),
    ("answerer stop", "evaluate.openai", {"stop": "[]"}, EVALUATION),
    ("answerer prompt", "evaluate.openai", {"prompt": "judge-v1"}, EVALUATION),
    ("refusal threshold", "evaluate", {"threshold": "0.5"}, {Step.EVALUATE}),
    ("refusal by phrases only", "evaluate", {"embedding": "false"}, {Step.EVALUATE}),
    ("bootstrap", "evaluate", {"bootstrap": "10", "seed": "1"}, {Step.EVALUATE}),
    ("calibration bins", "evaluate", {"bins": "5", "min_bin_count": "3"}, {Step.EVALUATE}),
    ("another answerer backend", "evaluate.vllm", {"model": "other", "chat": "true"}, set()),
    ("answerer server (knobs)", "evaluate.openai",
     {"base_url": LOCAL, "max_concurrency": "2", "max_retries": "0", "timeout": "5"}, set()),
    ("judge concurrency (a knob)", "judge", {"max_concurrency": "2", "timeout": "5"}, set()),
    ("judge server (a knob)", "judge", {"base_url": "http://127.0.0.1:8/v1"}, set()),
    ("tantivy threads (knobs)", "token_index", {"threads": "1", "heap_mb": "64"}, set()),
    ("embedder knobs", "embedder", {"batch_size": "8", "threads": "1", "export_dir": "x"}, set()),
    ("faiss threads (a knob)", "vector_index", {"threads": "1"}, set()),
    ("LLM cache (a knob)", "build", {"llm_cache": "false"}, set()),
    ("judge all candidates", "boundary", {"judge_all_candidates": "true"}, FROM_TOKEN_JUDGE),
    ("run name (a knob)", "build", {"name": "other", "output_root": "elsewhere"}, set()),
    ("publishing (knobs)", "hub", {"repo_id": "me/x", "private": "false"}, set()),
    ("Label Studio server (knobs)", "labelstudio",
     {"url": "http://127.0.0.1:8/", "api_key_env": "MY_TOKEN", "timeout": "5"}, set()),
    ("completed files' folder (a knob)", "annotation", {"completed_dir": "elsewhere"}, set()),
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


def test_the_device_is_a_knob_once_runtime_and_precision_are_given(
    inputs: dict[str, Path],
) -> None:
    pinned = merged(base(inputs), "embedder", runtime="torch", precision="fp32")
    assert changed(pinned, merged(pinned, "embedder", device="cuda")) == set()


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
        Step.TOKEN_INDEX, Step.VECTOR_INDEX, Step.VERBATIM, *FROM_TOKEN_SEARCH,
    }  # fmt: skip
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert fingerprints(sections)[Step.TOKEN_INDEX] != after[Step.TOKEN_INDEX]


def test_question_files_count_by_content(inputs: dict[str, Path]) -> None:
    sections = base(inputs)
    before = fingerprints(sections)
    questions = inputs["questions"]
    stat = questions.stat()
    os.utime(questions, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert fingerprints(sections) == before
    questions.write_text(questions.read_text().replace("Kellan", "Kellen"))
    assert {s for s, fp in fingerprints(sections).items() if fp != before[s]} == {
        Step.QUESTIONS, Step.VERBATIM, *SHARD_STEPS_ON,
    }  # fmt: skip


def test_a_local_dataset_folder_counts_by_its_files(inputs: dict[str, Path]) -> None:
    folder = inputs["questions"].parent / "dataset"
    (folder / "data").mkdir(parents=True)
    rows = folder / "data" / "test.jsonl"
    rows.write_text(inputs["questions"].read_text())
    hub = {"source": "hub", "name": str(folder), "config": "", "split": "test"}
    sections = {**base(inputs), "pool.dev": hub}
    before = fingerprints(sections)
    rows.write_text(rows.read_text() + rows.read_text().replace("q1", "q2"))
    assert {s for s, fp in fingerprints(sections).items() if fp != before[s]} == {
        Step.QUESTIONS, Step.VERBATIM, *SHARD_STEPS_ON,
    }  # fmt: skip


def test_a_model_in_a_local_folder_counts_by_its_files(inputs: dict[str, Path]) -> None:
    model = inputs["corpus"].parent / "my-embedder"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights")
    sections = {**base(inputs), "embedder": {"model": str(model)}}
    before = fingerprints(sections)
    (model / "model.safetensors").write_bytes(b"other weights")
    changed = {s for s, fp in fingerprints(sections).items() if fp != before[s]}
    assert Step.VECTOR_INDEX in changed and Step.TOKEN_INDEX not in changed


def test_the_demo_questions_go_only_with_the_demo_corpus(inputs: dict[str, Path]) -> None:
    sections = {**base(inputs), "pool.dev": {"source": "demo"}}
    with pytest.raises(ConfigError, match=r"pool 'dev' is the demo's questions.*\[pool.NAME\]"):
        Plan(read_config(sections)).questions("dev")


def test_a_missing_input_file_names_its_setting_and_the_step(inputs: dict[str, Path]) -> None:
    pool = {"source": "tipqa-jsonl", "paths": "absent/questions.jsonl"}
    with pytest.raises(InputError) as error:
        Plan(read_config({**base(inputs), "pool.dev": pool})).questions("dev")
    said = str(error.value)
    assert said.startswith("[pool.dev] paths: absent/questions.jsonl: no such file")
    assert f"read by PrepareQuestions(pool=dev); a relative path is relative to the working " \
        f"folder, {Path.cwd()}" in said  # fmt: skip
    groups = {"corpus": {"source": "files"}, "corpus.web": {"paths": "absent/*.jsonl"}}
    with pytest.raises(InputError, match=r"^\[corpus.web\] paths: absent/\*.jsonl: the pattern "):
        Plan(read_config({**base(inputs), **groups})).token_index  # noqa: B018


def test_shards_differ_and_records_say_what_decided_them(inputs: dict[str, Path]) -> None:
    plan = Plan(read_config(base(inputs)))
    first = plan.shard("dev", Step.TOKEN_JUDGE, 0).record
    second = plan.shard("dev", Step.TOKEN_JUDGE, 1).record
    assert first.fingerprint != second.fingerprint
    assert first.settings == second.settings
    judge = first.settings["judge"]
    assert judge["backend"] == "openai" and judge["model"] == "judge-a"
    assert len(judge["prompt_sha256"]) == 64 and "base_url" not in judge
    assert first.inputs[Step.TOKEN_SEARCH] == plan.pool_step("dev", Step.TOKEN_SEARCH).fingerprint


def test_an_elasticsearch_cluster_is_part_of_the_index_without_credentials(
    inputs: dict[str, Path],
) -> None:
    sections = {
        **base(inputs),
        "token_index": {"backend": "elasticsearch"},
        "elasticsearch": {"url": "https://user:secret@es.example:9200"},
    }
    record = Plan(read_config(sections)).token_index.record
    assert record.inputs["elasticsearch"] == {"cluster": "https://es.example:9200"}
    assert "secret" not in str(record.provenance())
    other = merged(sections, "elasticsearch", url="https://es2.example:9200")
    assert Plan(read_config(other)).token_index.fingerprint != record.fingerprint
    with pytest.raises(ConfigError, match="TIPQA_ES_URL"):
        _ = Plan(read_config(merged(sections, "elasticsearch", url=""))).token_index


def test_the_refusal_embedder_counts_only_when_it_reads_refusals(inputs: dict[str, Path]) -> None:
    sections = base(inputs)
    phrases_only = merged(sections, "evaluate", embedding="false")
    other_model = merged(phrases_only, "embedder", model="other/model")
    before, after = fingerprints(phrases_only), fingerprints(other_model)
    assert before[Step.PREDICTIONS] != after[Step.PREDICTIONS]  # the splits changed
    record = Plan(read_config(other_model)).evaluate("openai", "test").record
    assert "embedder" not in record.settings
    assert record.inputs == {Step.PREDICTIONS: after[Step.PREDICTIONS], "scorer": SCORER_VERSION}
    with_embedder = Plan(read_config(sections)).evaluate("openai", "test").record
    assert with_embedder.settings["embedder"]["backend"] == "sentence-transformers"


def test_evaluation_records_say_what_decided_them(inputs: dict[str, Path]) -> None:
    plan = Plan(read_config(merged(base(inputs), "evaluate.openai", model="m", base_url=LOCAL)))
    predictions = plan.predictions("openai", "test").record
    answerer = predictions.settings["answerer"]
    assert answerer["backend"] == "openai" and answerer["model"] == "m"
    assert len(answerer["prompt_sha256"]) == 64 and "base_url" not in answerer
    assert predictions.settings["split"] == "test"
    assert predictions.inputs == {Step.SPLITS: plan.splits.fingerprint}
    assert plan.predictions("vllm", "test").fingerprint != predictions.fingerprint
    with pytest.raises(ConfigError, match=r"split 'train' is not made .* makes test; train"):
        plan.predictions("openai", "train")


def test_the_labelling_config_counts_by_its_content_not_its_path(tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parents[3] / "annotation" / "label-studio.xml"
    copy = tmp_path / "copy.xml"
    copy.write_text(shipped.read_text())
    before = fingerprints({})
    moved = fingerprints({"labelstudio": {"label_config": str(copy)}})
    assert moved == before
    copy.write_text(shipped.read_text().replace("Choose yes or no", "Choose one"))
    edited = fingerprints({"labelstudio": {"label_config": str(copy)}})
    assert {step for step in before if before[step] != edited[step]} == LABEL_STUDIO
    with pytest.raises(ConfigError, match=r"\[labelstudio\] label_config: no file 'nowhere.xml'"):
        _ = Plan(read_config({"labelstudio": {"label_config": "nowhere.xml"}})).annotation_push
