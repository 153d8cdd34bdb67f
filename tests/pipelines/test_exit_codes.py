"""How a `luigi` run ends: Ctrl-C on a build on one machine says it was interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from support.tests_support import luigi_config, run_luigi

from tipqa.core.cli import INTERRUPTED
from tipqa.core.layout import RunLayout


def test_ctrl_c_says_interrupted_and_the_summary_says_not_finished(tmp_path: Path) -> None:
    config = luigi_config(tmp_path, core={"log_level": "WARNING", "no_lock": "true"})
    run = tmp_path / "outputs" / "t"
    run.mkdir(parents=True)
    (run / "summary.md").write_text("# Build t\n\n- pool **dev**: an earlier build\n")
    env = {**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines", "CreateDataset"]
    build = subprocess.Popen(
        [*command, "--local-scheduler"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not RunLayout(run).world.stats.exists() and build.poll() is None:
        assert time.monotonic() < deadline, "the build made no demo world in 120 s"
        time.sleep(0.2)
    build.send_signal(signal.SIGINT)
    _, stderr = build.communicate(timeout=120)
    assert build.returncode == INTERRUPTED, stderr[-3000:]
    assert "tipqa: CreateDataset interrupted (Ctrl-C)" in stderr
    assert "Traceback" not in stderr and "another client" not in stderr
    assert "not finished" in (run / "summary.md").read_text()


NO_LOCK = {"log_level": "WARNING", "no_lock": "true"}
QUESTION = {"id": "q1", "text": "Who founded Vellmar Abbey?", "answer": "Ana Brisk", "aliases": []}


def own_corpus(tmp_path: Path, paths: str) -> Path:
    """A config of one question file and a corpus of `paths` (the demo's audit included)."""
    questions = tmp_path / "questions.jsonl"
    questions.write_bytes(orjson.dumps(QUESTION) + b"\n")
    pool = {"source": "tipqa-jsonl", "paths": str(questions)}
    corpus = {"source": "files", "paths": paths}
    return luigi_config(tmp_path, core=NO_LOCK, corpus=corpus, **{"pool.dev": pool})


@pytest.mark.parametrize("kind", ["missing", "dangling"])
def test_a_missing_or_dangling_corpus_path_is_one_line_and_exit_35(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "corpus.jsonl"
    if kind == "dangling":
        path.symlink_to(tmp_path / "gone.jsonl")
    result = run_luigi(own_corpus(tmp_path, str(path)), "CreateDataset")
    assert result.returncode == 35, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if "no such file" in line]
    assert len(said) == 1 and str(path) in said[0], result.stderr[-3000:]


def test_an_empty_corpus_names_its_files_in_both_index_builds(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(b"")
    (corpus / "b.jsonl").write_bytes(b"\n\n")
    result = run_luigi(own_corpus(tmp_path, str(corpus)), "CreateDataset")
    assert result.returncode == 30, result.stderr[-3000:]
    assert "the corpus has no readable document" in result.stderr
    assert str(corpus / "a.jsonl") in result.stderr and str(corpus / "b.jsonl") in result.stderr
    assert "calibrate" not in result.stderr, "the vector index build names the files too"
