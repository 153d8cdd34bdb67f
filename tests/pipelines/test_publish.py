"""Splits, Hub folder, report and publish with the real `luigi` command, on two question pools.

The two pools hold the same demo questions under different ids (TriviaQA's dev and train sets
share no question), so both pools get the same labels, known by construction.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import datasets
import pytest
from support.croissant_support import records
from support.fake_hub import FakeHub
from support.tests_support import luigi_config, run_luigi

from tipqa.core.jsonl import read_json, read_records, write_records
from tipqa.core.layout import SplitsLayout
from tipqa.core.records import LABELS, LabeledQuestion, Question
from tipqa.dataset.splits import SPLITS
from tipqa.hub.folder import config_specs
from tipqa.sources.demo.world import WorldSpec, write_world

pytestmark = pytest.mark.slow

TOKEN = "hf_tipqaPIPELINEfakeTOKEN5555secret"
REPO = "someone/tip-demo"


def two_pool_config(root: Path, **overrides: dict[str, str]) -> Path:
    """A small world's corpus, a dev pool and a train pool (the same questions, other ids)."""
    world = root / "world-src"
    if not world.is_dir():
        write_world(WorldSpec(documents=700, seed=5, k1=20, files=3), world)
        questions = read_records(world / "questions.jsonl", Question)
        write_records(root / "dev.jsonl", questions)
        for q in questions:
            q.id = f"train-{q.id}"
        write_records(root / "train.jsonl", questions)
    pools = {
        name: {"source": "tipqa-jsonl", "paths": [str(root / f"{name}.jsonl")]}
        for name in ("dev", "train")
    }
    sections = {
        "questions": {"pools": json.dumps(pools)},
        "corpus": {"source": "files", "paths": json.dumps([str(world / "corpus")])},
        "splits": {"validation_per_label": "3", "seed": "1"},
        "hub": {"repo_id": REPO, "pretty_name": "TIP demo", "explorer": "true"},
    }
    for name, values in overrides.items():
        sections[name] = {**sections.get(name, {}), **values}
    return luigi_config(root, **sections)


def run_with_hub(config: Path, hub_home: Path, *task: str) -> subprocess.CompletedProcess[str]:
    """`luigi ... TASK` online (for the local fake Hub only), with the fake token, Xet off."""
    hub = {"HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1", "HF_HOME": str(hub_home)}
    return run_luigi(config, *task, env={**hub, "HF_TOKEN": TOKEN})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One CreateDataset over the two pools."""
    root = tmp_path_factory.mktemp("two-pools")
    result = run_luigi(two_pool_config(root), "CreateDataset")
    assert result.returncode == 0, result.stderr[-3000:]
    return root


def labels(root: Path, pool: str) -> dict[str, str]:
    folder = root / "outputs" / "t" / "pools" / pool / "partition"
    rows = [r for label in LABELS for r in read_records(folder / f"{label}.jsonl", LabeledQuestion)]
    return {r.id.removeprefix("train-"): r.label for r in rows}


def test_create_dataset_makes_the_splits(built: Path) -> None:
    run = built / "outputs" / "t"
    dev = read_json(run / "pools" / "dev" / "partition" / "stats.json")["counts"]
    assert labels(built, "dev") == labels(built, "train")
    info = read_json(run / "splits" / "stats.json")["info"]
    splits = info["splits"]
    assert splits["test"]["answerable"] == dev["answerable"]
    assert splits["test"]["unanswerable"] == dev["unanswerable"]
    assert splits["validation"]["answerable"] == splits["validation"]["unanswerable"] == 3
    assert splits["train"]["questions"] == dev["answerable"] + dev["unanswerable"] - 6
    assert info["pools"]["train"]["discarded"] == dev["discarded"] > 0
    ids = {}
    for name in splits:
        rows = read_records(run / "splits" / name / "questions.jsonl", LabeledQuestion)
        ids[name] = {r.id for r in rows}
    assert not (ids["train"] & ids["validation"]) and not (ids["test"] & ids["train"])
    assert all(i.startswith("train-") for i in ids["train"] | ids["validation"])


def test_hub_folder_and_report(built: Path, tmp_path: Path) -> None:
    run = built / "outputs" / "t"
    info = read_json(run / "splits" / "stats.json")["info"]
    folder = run / "hub"
    for config in ("questions", "instances"):
        loaded = datasets.load_dataset(str(folder), config, cache_dir=str(tmp_path))
        assert set(loaded) == {"train", "validation", "test"}
        key = "questions" if config == "questions" else "instances"
        assert {s: loaded[s].num_rows for s in loaded} == {
            s: info["splits"][s][key] for s in loaded
        }
    meta = (folder / "explorer" / "data" / "meta.js").read_text()
    assert '"whole":false' in meta  # the Hub's small copy: excerpts but for the evidence
    card = (folder / "README.md").read_text()
    assert "# TIP demo" in card and f'load_dataset("{REPO}", "questions")' in card
    assert "| k1 (token-stage documents judged at most) | 20 |" in card
    report = run / "report"
    assert {p.name for p in report.iterdir()} >= {"report.md", "funnel.png", "matches.png"}
    assert "| train |" in (report / "report.md").read_text()


@pytest.mark.needs("mlcroissant")
def test_croissant_json_is_valid_and_reads_back_as_the_splits(built: Path) -> None:
    import mlcroissant

    run = built / "outputs" / "t"
    document = read_json(run / "hub" / "croissant.json")
    dataset = mlcroissant.Dataset(jsonld=run / "hub" / "croissant.json")
    assert not dataset.metadata.ctx.issues.errors
    names = [node["@id"] for node in document["recordSet"]]
    assert {f"{c}/{s}" for c in ("questions", "relevance") for s in SPLITS} <= set(names)
    splits = SplitsLayout(run / "splits")
    specs = {spec.name: spec for spec in config_specs()}
    for name in names:
        config, split = name.split("/")
        assert records(dataset, name) == list(specs[config].rows(splits, split)), name
    analysis = "\n".join(dataset.metadata.data_annotation_analysis)
    for pool in ("dev", "train"):
        found = read_json(run / "pools" / pool / "audit.json")["by_label"]["unanswerable"]
        assert (
            f"Search audit of pool `{pool}`, label unanswerable: {found['labelled']:,} labelled, "
            f"{found['audited']:,} audited, evidence found for {found['found']:,}" in analysis
        )
    judge = read_json(run / "splits" / "stats.json")["info"]["parameters"]["judge"]
    tools = dataset.metadata.machine_annotation_tools
    assert (
        f"Relevance judge: offline rules (`rules`, version {judge['rules_version']})" in (tools[1])
    )


def test_publish_dataset_uploads_once_and_keeps_the_token_out(built: Path) -> None:
    with FakeHub(TOKEN) as hub:
        home = built / "hf-home"
        config = two_pool_config(built, hub={"endpoint": hub.url})
        planned = run_with_hub(config, home, "PublishDataset", "--dry-run")
        assert planned.returncode == 0, planned.stderr[-3000:]
        assert "would upload 24 file(s)" in planned.stderr and REPO not in hub.repos  # 8: explorer

        first = run_with_hub(config, home, "PublishDataset")
        assert first.returncode == 0, first.stderr[-3000:]
        folder = built / "outputs" / "t" / "hub"
        local = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.*")}
        stored = hub.repos[REPO].files
        assert {name: stored[name].content for name in local} == local
        assert hub.repos[REPO].private is True
        requests = len(hub.requests)

        again = run_with_hub(config, home, "PublishDataset")
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(hub.requests) == requests and len(hub.commits(REPO)) == 1

        record = read_json(built / "outputs" / "t" / "publish" / "someone--tip-demo.json")
        assert record["commit_oid"] == hub.commits(REPO)[0]["oid"]
        for result in (planned, first, again):
            assert TOKEN not in result.stdout + result.stderr
        for path in built.rglob("*"):
            if path.is_file() and path.stat().st_size < 50_000_000:
                assert TOKEN.encode() not in path.read_bytes(), path
