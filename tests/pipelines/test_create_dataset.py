"""The whole build, end to end, with the real `luigi` command on small worlds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from datasets import load_from_disk
from support.seed_support import DemoBuilds, candidates_config, seed_run
from support.tests_support import luigi_config, run_luigi

from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.sources.demo.world import Expected

pytestmark = pytest.mark.slow

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
STEPS = ["keywords", "token_search", "token_judge", "vector_search", "vector_judge"]


def partition_rows(root: Path, run: str) -> dict[str, LabeledQuestion]:
    """Every labelled question of the run's dev pool, by id."""
    folder = root / "outputs" / run / "pools" / "dev" / "partition"
    rows = [r for label in LABELS for r in read_records(folder / f"{label}.jsonl", LabeledQuestion)]
    return {r.id: r for r in rows}


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory, demo_builds: DemoBuilds) -> Path:
    """One uninterrupted build of the small demo world (on the session's world and indexes)."""
    root = tmp_path_factory.mktemp("clean")
    config = luigi_config(root)
    seed_run(root, demo_builds())
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-3000:]
    return root


def test_every_label_equals_its_label_by_construction(clean_run: Path) -> None:
    run = clean_run / "outputs" / "t"
    expected = read_records(RunLayout(run).world.expected, Expected)
    rows = partition_rows(clean_run, "t")
    assert {e.case for e in expected} >= {"single", "vector_only", "discarded", "buried", "long"}
    assert len(rows) == len(expected)
    for item in expected:
        row = rows[item.question_id]
        assert (row.label, row.stage) == (item.label, item.stage), (item, row.reason)
        if item.label == "answerable":
            assert row.evidence is not None
            assert row.evidence.doc_id == item.fact_doc_id
    judged = {r.id: r for r in rows.values() if r.label == "discarded"}
    assert all(r.total_matches and r.total_matches > 20 for r in judged.values())


def test_the_candidate_vector_stage_gives_the_full_index_s_labels(
    clean_run: Path, tmp_path: Path, demo_builds: DemoBuilds
) -> None:
    config = candidates_config(tmp_path)
    seed_run(tmp_path, demo_builds("candidates"))
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-3000:]
    full, mine = partition_rows(clean_run, "t"), partition_rows(tmp_path, "t")
    assert {q: (r.label, r.stage) for q, r in mine.items()} == {
        q: (r.label, r.stage) for q, r in full.items()
    }
    run = tmp_path / "outputs" / "t"
    searched = [
        read_json(p) for p in sorted(run.glob("pools/dev/shards/*/vector_search.stats.json"))
    ]
    embedded = sum(s["counts"].get("chunks_embedded", 0) for s in searched)
    corpus_chunks = read_json(clean_run / "outputs" / "t" / "index" / "vector.stats.json")
    assert 0 < embedded < corpus_chunks["counts"]["index.chunks"]
    assert (
        "`candidates`: the chunks of the first 100 documents"
        in (run / "hub" / "README.md").read_text()
    )


def test_outputs_stats_and_dataset_dict(clean_run: Path) -> None:
    pool = clean_run / "outputs" / "t" / "pools" / "dev"
    for shard in sorted((pool / "shards").iterdir()):
        for step in STEPS:
            stats = read_json(shard / f"{step}.stats.json")
            assert stats["step"] == step and stats["seconds"] >= 0
    stats = read_json(pool / "partition" / "stats.json")
    dataset = load_from_disk(str(pool / "partition" / "hf"))
    for label in LABELS:
        assert dataset[label].num_rows == stats["counts"].get(label, 0)
    assert dataset["instances"].num_rows == stats["counts"]["instances"] > 0
    assert set(dataset["answerable"]["evidence_doc_id"]) != {None}


def test_a_failed_build_resumes_without_redoing_finished_work(
    clean_run: Path, tmp_path: Path
) -> None:
    broken = luigi_config(tmp_path, embedder={"model": "/nonexistent/model"})
    failed = run_luigi(broken, "CreateDataset")
    assert failed.returncode == 30, failed.stderr[-3000:]
    shards = tmp_path / "outputs" / "t" / "pools" / "dev" / "shards"
    done = sorted(shards.glob("*/token_judge.stats.json"))
    assert done and not list(shards.glob("*/vector_search.stats.json"))
    before = {path: path.stat().st_mtime_ns for path in done}

    resumed = run_luigi(luigi_config(tmp_path), "CreateDataset")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert {path: path.stat().st_mtime_ns for path in done} == before
    for name in [*(f"{label}.jsonl" for label in LABELS), "instances.jsonl"]:
        mine = tmp_path / "outputs" / "t" / "pools" / "dev" / "partition" / name
        clean = clean_run / "outputs" / "t" / "pools" / "dev" / "partition" / name
        assert mine.read_bytes() == clean.read_bytes(), name


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not here")
def test_real_triviaqa_sample_against_real_passages_and_its_evidence(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(SHARED / "corpus" / "wikipedia-passages-1000.jsonl", corpus)
    shutil.copytree(SHARED / "triviaqa" / "official-sample" / "evidence", tmp_path / "evidence")
    qa = SHARED / "triviaqa" / "official-sample" / "qa"
    pools = {"dev": {"source": "triviaqa-json", "paths": [str(qa)]}}
    config = luigi_config(
        tmp_path,
        questions={"pools": json.dumps(pools)},
        corpus={"source": "files"},
        **{
            "corpus.passages": {"paths": str(corpus), "text_field": "contents"},
            "corpus.evidence": {"paths": str(tmp_path / "evidence"), "format": "text"},
        },
    )
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = partition_rows(tmp_path, "t")
    assert len(rows) == 9
    assert all(r.label in LABELS and r.reason for r in rows.values())
    assert any(r.keywords for r in rows.values())
    token_index = read_json(tmp_path / "outputs" / "t" / "index" / "token.stats.json")
    assert token_index["counts"]["corpus.documents"] == 1000 + 19
    evidence = {r.evidence.doc_id for r in rows.values() if r.evidence is not None}
    assert any(doc.startswith(("wikipedia/", "web/")) for doc in evidence), evidence
