"""Several `CreateDataset` clients on one `luigid`, started as the scale guide says."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.seed_support import DemoBuilds, candidates_config, seed_run

from tipqa.core.jsonl import read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.sources.demo.world import Expected

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "scale.md"
USER = "tipqa-luigid"
# Luigi's idle sleep between asks for a task the other client runs: 1 to 6 s by default
WORLD = {"build": {"shard_size": "10"}, "worker": {"wait_interval": "0.1", "wait_jitter": "0"}}
DONE = re.compile(r"Worker\(.*?\) done\s+(\S+\(.*?\))$", re.M)


def guide_command(start: str) -> str:
    """The first command of the scale guide that starts with `start` (continuations joined)."""
    text = GUIDE.read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    found = next(line for line in lines if re.search(rf"(^|\s){re.escape(start)}\b", line))
    return re.sub(r"\s+", " ", found.split("#", 1)[0]).strip()


def free_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def luigid_user() -> str | None:
    """A non-root user to run luigid as, made once when the tests run as root; None when
    there is none that can run this Python (an interpreter under root's home)."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return None
    try:
        pwd.getpwnam(USER)
    except KeyError:
        made = subprocess.run(["useradd", "--no-create-home", USER], capture_output=True)
        if made.returncode != 0:
            return None
    probe = ["runuser", "-u", USER, "--", sys.executable, "-c", "import luigi"]
    return USER if subprocess.run(probe, capture_output=True).returncode == 0 else None


@pytest.fixture
def scheduler() -> Iterator[tuple[int, Path]]:
    """luigid started by the guide's command, as a non-root user, in a folder it owns."""
    user = luigid_user()
    folder = Path(tempfile.mkdtemp(prefix="tipqa-luigid-"))
    folder.chmod(0o755)
    if user is not None:
        shutil.chown(folder, user, user)
    port = free_port()
    command = guide_command("luigid").replace("~/luigid", str(folder))
    command = command.replace("$PWD", str(ROOT)).replace("--port 8082", f"--port {port}")
    assert "--background" in command and "--address 127.0.0.1" in command, command
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = ["bash", "-c", f"export PATH={env['PATH']}; {command}"]
    if user is not None:
        run = ["runuser", "-u", user, "--", *run]
    subprocess.run(run, env=env, check=True, cwd="/", timeout=60)
    pid = int(_wait_for(folder / "pid").read_text())
    try:
        _wait_for_port(port)
        if user is not None:
            owner = os.stat(f"/proc/{pid}").st_uid
            assert owner == pwd.getpwnam(user).pw_uid, "luigid runs as the non-root user"
        yield port, folder
    finally:
        os.kill(pid, 15)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_for(path: Path) -> Path:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return path
        time.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


def _wait_for_port(port: int) -> None:
    for _ in range(200):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"luigid never listened on {port}")


def small_world(folder: Path, demo_builds: DemoBuilds) -> Path:
    """The small demo world's config in `folder`, with the candidate vector stage, its world
    and indexes copied in from the session's build."""
    folder.mkdir()
    config = candidates_config(folder, **WORLD)
    seed_run(folder, demo_builds("candidates"))
    return config


def labels(root: Path) -> dict[str, tuple[str, str | None]]:
    """Each question's label and stage."""
    folder = root / "outputs" / "t" / "pools" / "dev" / "partition"
    rows = [r for label in LABELS for r in read_records(folder / f"{label}.jsonl", LabeledQuestion)]
    return {r.id: (r.label, r.stage) for r in rows}


def test_two_clients_build_once_and_both_exit_zero(
    scheduler: tuple[int, Path], tmp_path: Path, demo_builds: DemoBuilds
) -> None:
    port, _ = scheduler
    config = small_world(tmp_path / "shared", demo_builds)
    client = guide_command("luigi --module pipelines CreateDataset").split()
    client = [a for a in client if not a.startswith("LUIGI_CONFIG_PATH=")]
    assert client[:4] == ["luigi", "--module", "pipelines", "CreateDataset"], client
    assert {"--no-lock", "--worker-keep-alive"} <= set(client), client
    args = [a if a != "8" else "2" for a in client[4:]]
    env = {**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines", "CreateDataset", *args]
    command += ["--scheduler-host", "127.0.0.1", "--scheduler-port", str(port)]
    command += ["--log-level", "INFO"]
    clients = [
        subprocess.Popen(
            command, cwd=config.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for _ in range(2)
    ]
    logs = [process.communicate(timeout=1200)[0].decode() for process in clients]
    for process, log in zip(clients, logs, strict=True):
        assert process.returncode == 0, log[-4000:]

    ran = Counter(task for log in logs for task in DONE.findall(log))
    steps = {task: count for task, count in ran.items() if not task.startswith("CreateDataset")}
    assert steps and max(steps.values()) == 1, [t for t, n in steps.items() if n > 1]
    assert ran["CreateDataset()"] == 2, "each client ran its own summary"
    shards = len(
        list((tmp_path / "shared" / "outputs" / "t" / "pools" / "dev" / "shards").iterdir())
    )
    for family in ("ExtractKeywords", "TokenSearch", "TokenJudge", "VectorSearch", "VectorJudge"):
        runs = [task for task in steps if task.startswith(f"{family}(")]
        assert len(runs) == shards, (family, runs)
    run = RunLayout(tmp_path / "shared" / "outputs" / "t")
    expected = read_records(run.world.expected, Expected)
    assert labels(tmp_path / "shared") == {e.question_id: (e.label, e.stage) for e in expected}
