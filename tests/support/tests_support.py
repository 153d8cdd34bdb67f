"""Helpers shared by the tests: run the real `luigi` command on a small demo world, a judge
server that plays the rules, a token index's fetch over documents in memory."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

from support import openai_server as fake
from tipqa.core.records import Document, JudgeRequest
from tipqa.indexes.token_index.base import FetchDocuments
from tipqa.llm.judges.rules import is_relevant
from tipqa.llm.keywords.rules import extract_keywords

SMALL_WORLD = {
    "core": {"log_level": "WARNING"},
    "build": {"name": "t", "shard_size": "7", "k1": "20", "k2": "10"},
    "demo": {"documents": "700", "seed": "5", "files": "3"},
    "pool.dev": {"source": "demo"},
    "vector_index": {"backend": "faiss", "kind": "flat"},
}


def luigi_config(tmp_path: Path, **overrides: dict[str, str]) -> Path:
    """Write a luigi.cfg for a small demo world under `tmp_path`, with section overrides.

    Pools given as `questions` (JSON) replace the demo pool `[pool.dev]`.
    """
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict(SMALL_WORLD)
    if "questions" in overrides:
        parser.remove_section("pool.dev")
    parser.read_dict({"build": {"output_root": str(tmp_path / "outputs")}})
    parser.read_dict(overrides)
    path = tmp_path / "luigi.cfg"
    with open(path, "w") as handle:
        parser.write(handle)
    return path


def run_luigi(
    config: Path, *task: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`luigi --module pipelines TASK --local-scheduler` with `config`, from its folder.

    `--no-lock`: luigi refuses a second process with the same command line, and tests in
    separate folders may run at the same time. `env` adds to (or overrides) the environment.
    """
    env = {**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1", **(env or {})}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines", *task]
    return subprocess.run(
        [*command, "--local-scheduler", "--no-lock"],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def rule_playing_server(body: dict, attempt: int, headers: dict) -> fake.Reply:
    """Answer keyword prompts with the rule extractor and judge prompts with the rule judge.

    Judge answers carry P(yes) = 0.9 or 0.1, sent where the server shape sends logprobs.
    """
    content = fake.last_user_message(body)
    match = fake.JUDGE_LAYOUT.search(content)
    if match is None:
        return fake.Reply(text=", ".join(extract_keywords(content)))
    passage, question, answer = match.groups()
    request = JudgeRequest(
        "q", question, answer, [answer], extract_keywords(question), "token", "d", "u", passage
    )
    relevant = is_relevant(request)
    return fake.Reply(text="yes" if relevant else "no", yes_probability=0.9 if relevant else 0.1)


def fetch_from(documents: dict[str, Document]) -> FetchDocuments:
    """A token index's `get` over `documents`: those of the ids asked for that it holds."""

    def fetch(ids: list[str]) -> dict[str, Document]:
        return {i: documents[i] for i in ids if i in documents}

    return fetch
